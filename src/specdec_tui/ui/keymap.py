"""Every key binding of the panel, each with an id so `App.set_keymap` (from `[ui.keymap]` in the
config) can remap it, plus the lookups the help screen and the palette use to show current keys.

Bindings live here as data (not scattered over classes) so the help screen, the footer and the
command palette all read the same list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from textual.binding import Binding, BindingType

# Binding ids are the public names users write in `[ui.keymap]`, e.g. `push = "ctrl+p,p"`.
# The footer shows the loop (push, restart, rollback, bench, cancel) plus help and quit, so it fits 80
# columns on every tab (the journal's status line says "/ filter"); the rest (`show=False`) is on the help
# screen (?) and in the palette (ctrl+p), like every binding.
APP_BINDINGS: list[BindingType] = [
    Binding("p", "push", "Push", id="push"),
    Binding("r", "restart", "Restart", id="restart"),
    Binding("u", "rollback", "Rollback", id="rollback"),
    Binding("b", "bench", "Bench", id="bench"),
    # the help and the palette say what each escape binding does (app.CANCEL_BENCH is the other), in 20 columns
    Binding("escape,c", "cancel", "Cancel", id="cancel", tooltip="Cancel / leave field"),
    Binding("ctrl+s", "save_session", "Save", id="save", show=False),
    Binding("o", "sessions", "Sessions", id="sessions", show=False),
    Binding("v", "compare", "Compare", id="compare", show=False),
    Binding("S", "sweep", "Sweep", id="sweep", show=False),
    Binding("R", "replay", "Replay", id="replay", show=False),
    Binding("T", "tune", "Tune", id="tune", show=False),
    # "Rate" in the footer (80 columns hold no more); the help and the palette say it in full (its tooltip)
    Binding("M", "rate_search", "Rate", id="rate-search", tooltip="Max rate within SLO"),
    Binding("question_mark", "help", "Help", id="help", key_display="?"),
    Binding("q,ctrl+q", "quit", "Quit", id="quit"),
]

# Every question, form and the help (`ui/screens/panel_modal.PanelModal`): Textual stops the app's keys at a modal
# screen, so without this quit's ctrl+q did nothing there (the draft question at start held it and every key after).
MODAL_BINDINGS: list[BindingType] = [
    Binding("ctrl+q", "app.quit", "Quit", id="quit-from-modal", show=False),
]

MAIN_SCREEN_BINDINGS: list[BindingType] = [
    Binding("1", "show_tab('config')", "Config", id="tab-config", show=False),
    Binding("2", "show_tab('journal')", "Journal", id="tab-journal", show=False),
    Binding("3", "show_tab('health')", "Health", id="tab-health", show=False),
    Binding("4", "show_tab('bench')", "Bench", id="tab-bench", show=False),
    Binding("5", "show_tab('trials')", "Trials", id="tab-trials", show=False),
    Binding("6", "show_tab('fleet')", "Fleet", id="tab-fleet", show=False),
    Binding("slash", "filter_journal", "Filter", id="filter", key_display="/", show=False),
    Binding("f", "apply_fix", "Apply fix", id="apply-fix", show=False),
    # in the footer only while there is an edit to discard (MainScreen.check_action)
    Binding("d", "discard_edit", "Discard edit", id="discard-edit"),
]

# The journal pane's own keys (active while it has focus). Listed in help and palette as "Journal".
JOURNAL_BINDINGS: list[BindingType] = [
    Binding("slash", "open_filter", "Filter journal", id="journal.filter", show=False),
    Binding("end", "follow", "Follow journal", id="journal.follow", show=False),
    Binding("escape", "close_filter", "Close journal filter", show=False, id="journal.close_filter"),
    Binding("h", "toggle_own", "Toggle panel checks", id="journal.own", show=False),
]
# The unit editor's: escape leaves it (its border title says so; the footer has no room).
EDITOR_BINDINGS: list[BindingType] = [
    Binding("escape", "leave", "Leave the editor", show=False, id="editor.leave"),
]
# Widget-level scopes the app's `binding_scopes` does not list; the help screen adds them.
WIDGET_SCOPES: dict[str, list[BindingType]] = {"Journal": JOURNAL_BINDINGS, "Unit editor": EDITOR_BINDINGS}


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One line of the help screen: where the binding lives, its id, its current keys, what it does."""

    scope: str
    binding_id: str
    keys: str
    description: str


KeyDisplay = Callable[[str], str]  # a key's name ("question_mark", "ctrl+s") → how it is shown ("?", "^s")


def key_name(key: str) -> str:
    """A key shown by its name, as the config's [ui.keymap] writes it."""
    return key


def bindings_of(items: Iterable[BindingType]) -> list[Binding]:
    """One Binding per key (Textual's split: "escape,c" is two), as the app matches keys."""
    return list(Binding.make_bindings(items))


def bound_actions(items: Iterable[BindingType]) -> list[Binding]:
    """One Binding per entry of a BINDINGS list, its keys together ("escape,c"): what a user remaps by id, and
    what the help and the palette list once."""
    actions: list[Binding] = []
    for item in items:
        keys = bindings_of([item])
        actions.append(replace(keys[0], key=",".join(binding.key for binding in keys)))
    return actions


def current_keys(binding: Binding, keymap: Mapping[str, str], display: KeyDisplay = key_name) -> str:
    """The keys a binding answers to after the user's keymap, for display ("p", "escape, c"; with the app's
    `display`, "esc, c" as its footer writes them)."""
    keys = keymap.get(binding.id or "", binding.key) if binding.id else binding.key
    if binding.key_display and keys == binding.key:
        return binding.key_display
    return ", ".join(display(key.strip()) for key in keys.split(",") if key.strip())


def key_rows(scopes: Mapping[str, Iterable[BindingType]], keymap: Mapping[str, str],
             display: KeyDisplay = key_name) -> list[KeyRow]:
    """All bindings of the given scopes (e.g. {"App": App.BINDINGS, "Main": Screen.BINDINGS}), a row each."""
    return [KeyRow(scope, binding.id or "", current_keys(binding, keymap, display), described(binding))
            for scope, items in scopes.items() for binding in bound_actions(items)]


def described(binding: Binding) -> str:
    """What the help and the palette call a binding: its tooltip, the longer words where the footer's are cut short."""
    return binding.tooltip or binding.description or binding.action


def unknown_ids(keymap: Mapping[str, str], scopes: Iterable[Iterable[BindingType]]) -> list[str]:
    """Keymap entries that name no binding (a typo in the config), so the app can say so."""
    known = {b.id for items in scopes for b in bindings_of(items) if b.id}
    return sorted(k for k in keymap if k not in known)


def _answering(keymap: Mapping[str, str], items: Iterable[BindingType]) -> dict[str, set[str]]:
    """key → the ids that answer to it after `keymap`."""
    answering: dict[str, set[str]] = {}
    for binding in bound_actions(items):
        keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
        for key in keys.split(","):
            if key.strip() and binding.id:
                answering.setdefault(key.strip(), set()).add(binding.id)
    return answering


def clashes(keymap: Mapping[str, str], items: Iterable[BindingType]) -> list[str]:
    """Keys the keymap gives to a binding that another one active at the same time already answers to
    ("q: push and quit"), so a remap never silently takes quit's key; clashes the defaults have on purpose
    (the journal's own / and escape) are not the user's and are not said."""
    items = list(items)
    before = _answering({}, items)
    after = _answering(keymap, items)
    return [f"{key}: {' and '.join(sorted(ids))}" for key, ids in sorted(after.items())
            if len(ids) > 1 and ids != before.get(key)]


def keymap_problems(keymap: Mapping[str, str], scopes: Iterable[Iterable[BindingType]]) -> list[str]:
    """What the panel says at start about `[ui.keymap]`: ids that name no binding (of `scopes` or the widgets'),
    keys given to two bindings of the main screen at once."""
    if not keymap:
        return []
    problems: list[str] = []
    bad = unknown_ids(keymap, [*scopes, *WIDGET_SCOPES.values()])
    if bad:
        problems.append(f"[ui.keymap] names no such binding: {', '.join(bad)}. See ? for the ids.")
    keyless = sorted(name for name, keys in keymap.items() if name not in bad and not keys.replace(",", "").strip())
    if keyless:
        problems.append(f"[ui.keymap] leaves {', '.join(keyless)} with no key: the palette (ctrl+p) still runs it.")
    taken = clashes(keymap, [*APP_BINDINGS, *MAIN_SCREEN_BINDINGS, *JOURNAL_BINDINGS])
    if taken:
        problems.append(f"[ui.keymap] gives one key to two bindings ({'; '.join(taken)}): one of them will not "
                        "answer. Choose another key in the config.")
    return problems
