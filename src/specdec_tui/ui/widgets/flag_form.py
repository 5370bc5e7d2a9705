"""The speculative flags as a form: one row per flag, inline validation under each row.

The form never edits the unit itself: it posts `FlagForm.FlagEdited(name, value)` and the Config
pane applies it to the unit text (the source of truth), then calls `show_values` back. Values set
programmatically are remembered, so their change events are not mistaken for user edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

# The rows always shown, in this order (SGLang flag names without "--").
FORM_FLAGS: tuple[str, ...] = (
    "speculative-algorithm",
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
    "speculative-draft-model-path",
    "mem-fraction-static",
    "max-running-requests",
    "cuda-graph-max-bs",
)
ALGORITHM_FLAG = "speculative-algorithm"
FALLBACK_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def widget_id(prefix: str, flag: str) -> str:
    """A DOM id for a flag's widget (flag names may hold characters ids cannot)."""
    return f"{prefix}-{_ID_UNSAFE.sub('_', flag)}"


def algorithm_choices() -> tuple[str, ...]:
    try:
        from specdec_tui.core.flags import FLAGS

        choices = getattr(FLAGS.get(ALGORITHM_FLAG), "choices", None)
        return tuple(str(c) for c in choices) if choices else FALLBACK_ALGORITHMS
    except ImportError:
        return FALLBACK_ALGORITHMS


def flag_help(name: str) -> str:
    try:
        from specdec_tui.core.flags import FLAGS
    except ImportError:
        return ""
    spec = FLAGS.get(name)
    return str(getattr(spec, "help", "") or "") if spec else ""


class FlagForm(VerticalScroll):
    """Rows for `FORM_FLAGS` plus every other flag of the unit. Empty field = flag removed.

    The form itself takes no focus (a scroll container would add a dead Tab stop before the first
    field); its fields do, and scrolling follows the focused field."""

    can_focus = False

    DEFAULT_CSS = """
    FlagForm { height: 1fr; scrollbar-size-vertical: 1; }
    FlagForm .flag-row { height: 1; }
    FlagForm .flag-name { width: 30; color: $text-muted; }
    FlagForm .flag-row Input, FlagForm .flag-row Select { width: 1fr; }
    FlagForm .flag-issue { height: auto; padding-left: 2; display: none; }
    FlagForm .flag-issue.-shown { display: block; }
    FlagForm .flag-issue.-error { color: $error; }
    FlagForm .flag-issue.-warning { color: $warning; }
    FlagForm .flag-other-title { margin-top: 1; color: $text-muted; text-style: italic; }
    """

    @dataclass
    class FlagEdited(Message):
        """The user changed a field. `value` None means "remove the flag" (or a bare switch)."""

        name: str
        value: str | None

    def __init__(self, flags: Mapping[str, str | None] | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._values: dict[str, str | None] = {}
        self._other: tuple[str, ...] = ()
        self._switches: set[str] = set()
        self._focus_wanted = False
        self._rebuilding = False
        self._take(flags or {})

    def _take(self, flags: Mapping[str, str | None]) -> bool:
        """Remember `flags`; True when the set of rows must change (a recompose)."""
        other = tuple(n for n in flags if n not in FORM_FLAGS)
        switches = {n for n, v in flags.items() if v is None}
        self._values = {**{n: flags.get(n) for n in FORM_FLAGS}, **{n: flags[n] for n in other}}
        reshaped = other != self._other or switches != self._switches
        self._other, self._switches = other, switches
        return reshaped

    def compose(self) -> ComposeResult:
        for name in FORM_FLAGS:
            yield from self._row(name)
        if self._other:
            yield Static("other flags in the unit", classes="flag-other-title")
        for name in self._other:
            yield from self._row(name)

    def _row(self, name: str) -> Iterable[Any]:
        value = self._values.get(name)
        with Horizontal(classes="flag-row"):
            yield Label(name, classes="flag-name")
            if name == ALGORITHM_FLAG:
                options = [(c, c) for c in algorithm_choices()]
                if value and value not in dict(options):
                    options.append((value, value))
                yield Select(options, value=value or Select.NULL, compact=True, id=widget_id("field", name), prompt="(none)")
            else:
                placeholder = "(switch)" if name in self._switches else "(default)"
                field = Input(value=value or "", placeholder=placeholder, compact=True, id=widget_id("field", name))
                field.tooltip = flag_help(name) or None
                yield field
        yield Static("", classes="flag-issue", id=widget_id("issue", name), markup=False)

    def has_row(self, name: str) -> bool:
        """True when `name` has a field here (its issues show under it)."""
        return name in FORM_FLAGS or name in self._other

    @property
    def values(self) -> Mapping[str, str | None]:
        return dict(self._values)

    async def show_values(self, flags: Mapping[str, str | None]) -> None:
        """Make the fields show `flags` (the unit's current flags); adds/removes "other" rows."""
        if self._take(flags):
            focused = self.screen.focused if self.is_attached else None
            kept = focused.id if focused is not None and self in focused.ancestors else None
            self._rebuilding = True
            try:
                await self.recompose()
            finally:
                self._rebuilding = False
            if kept or self._focus_wanted:  # the rows were rebuilt under the cursor: keep it on its field
                self._focus_wanted = False
                self._refocus(kept)
            return
        for name, value in self._values.items():
            self._set_field(name, value)

    def focus_first_field(self) -> None:
        """Focus the first field; while the rows are being rebuilt, as soon as they are back."""
        if self._rebuilding:
            self._focus_wanted = True
        else:
            self._refocus(None)

    def _refocus(self, field_id: str | None) -> None:
        matches = self.query(f"#{field_id}") if field_id else None
        target = matches.first() if matches else next(iter(self.query("Input, Select")), None)
        if target is not None:  # now, not queued: a focus the user asks for meanwhile comes after and wins
            self.screen.set_focus(target, scroll_visible=False)

    def _set_field(self, name: str, value: str | None) -> None:
        matches = self.query(f"#{widget_id('field', name)}")
        if not matches:
            return
        field = matches.first()
        if isinstance(field, Select):
            if value and value not in algorithm_choices():
                field.set_options([(c, c) for c in (*algorithm_choices(), value)])
            field.value = value if value else Select.NULL
        elif isinstance(field, Input) and field.value != (value or ""):
            field.value = value or ""

    def show_issues(self, issues: Iterable[Any]) -> None:
        """Inline messages under each field (`Issue.flag` names the row); clears the others."""
        by_flag: dict[str, list[Any]] = {}
        for issue in issues:
            by_flag.setdefault(str(getattr(issue, "flag", "") or ""), []).append(issue)
        for line in self.query(".flag-issue").results(Static):
            name = next((n for n in (*FORM_FLAGS, *self._other) if widget_id("issue", n) == line.id), "")
            found = by_flag.get(name, [])
            line.set_class(bool(found), "-shown")
            line.set_class(any(i.level == "error" for i in found), "-error")
            line.set_class(bool(found) and all(i.level != "error" for i in found), "-warning")
            line.update("\n".join(f"{'✗' if i.level == 'error' else '!'} {i.message}" for i in found))

    def _flag_of(self, widget_id_: str | None) -> str | None:
        for name in (*FORM_FLAGS, *self._other):
            if widget_id("field", name) == widget_id_:
                return name
        return None

    def _edited(self, name: str | None, value: str | None) -> None:
        if name is None or self._values.get(name) == value:
            return  # a value we set ourselves, or no change
        self._values[name] = value
        self.post_message(self.FlagEdited(name, value))

    def on_input_changed(self, event: Input.Changed) -> None:
        """Live edits apply as you type; emptying a field waits for enter (so retyping a value
        does not move the flag to the end of ExecStart)."""
        event.stop()
        value = event.value.strip()
        if value:
            self._edited(self._flag_of(event.input.id), value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = self._flag_of(event.input.id)
        if not event.value.strip() and name not in self._switches:
            self._edited(name, None)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        value = None if event.value is Select.NULL else str(event.value)
        self._edited(self._flag_of(event.select.id), value)
