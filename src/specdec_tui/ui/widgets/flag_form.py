"""The speculative flags as a form: one row per flag, inline validation under each row.

Data flows one way. The form never edits the unit itself: a key typed (or a paste) in a field posts
`FlagForm.FlagEdited(name, value)`, an intent the Config pane applies once to the unit text (the
source of truth); the pane then renders the unit back through `show_values`. Rendering never posts
an edit (the fields are written with their change events prevented, new rows are built the same
way), and it never touches the field the person is typing in: a focused field keeps its own text
and cursor, so a burst of keys or a paste ends on exactly what was typed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.flag_table import FLAGS
from specdec_tui.core.long_words import clip_long_words
from specdec_tui.ui.exit_hold import exit_held
from specdec_tui.ui.textual_compat import make_compact
from specdec_tui.ui.widgets.flag_input import FlagInput
from specdec_tui.ui.widgets.form_line import FormLine
from specdec_tui.ui.widgets.input_stand_in import InputStandIn
from specdec_tui.ui.widgets.select_stand_in import SelectStandIn
from specdec_tui.ui.widgets.stand_in_swap import swap_in

# The rows always shown, in this order (SGLang flag names without "--").
FORM_FLAGS: tuple[str, ...] = (
    "speculative-algorithm",
    "speculative-num-steps",
    "speculative-eagle-topk",
    "speculative-num-draft-tokens",
    "speculative-draft-model-path",
    "mem-fraction-static",
    "max-running-requests",
    "cuda-graph-max-bs-decode",
)
ALGORITHM_FLAG = "speculative-algorithm"
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def widget_id(prefix: str, flag: str) -> str:
    """A DOM id for a flag's widget (flag names may hold characters ids cannot)."""
    return f"{prefix}-{_ID_UNSAFE.sub('_', flag)}"


def algorithm_choices() -> tuple[str, ...]:
    """The algorithms the dropdown offers: SGLang's, from the flag table."""
    spec = FLAGS.get(ALGORITHM_FLAG)
    return spec.choices if spec is not None else ()


def flag_help(name: str) -> str:
    spec = FLAGS.get(name)
    return spec.help if spec is not None else ""


class FlagForm(VerticalScroll):
    """Rows for `FORM_FLAGS` plus every other flag of the unit. Empty field = flag removed.

    The form itself takes no focus (a scroll container would add a dead Tab stop before the first
    field); its fields do, and scrolling follows the focused field."""

    can_focus = False

    # One grid of the form's own children (name, field; the issue line across both), not a row container per
    # flag: Textual reuses a style it has worked out for a node's siblings only (its style cache is keyed by the
    # parent), so with a container per row every field and name was styled from scratch (cold start, issue 34).
    DEFAULT_CSS = """
    FlagForm { height: 1fr; scrollbar-size-vertical: 1; layout: grid; grid-size: 2; grid-columns: 30 1fr;
               grid-rows: auto; }
    FlagForm .flag-name { width: 30; height: 1; color: $text-muted; }
    FlagForm > Input, FlagForm > Select, FlagForm > SelectStandIn,
    FlagForm > InputStandIn { width: 1fr; height: 1; }
    FlagForm .flag-issue { column-span: 2; height: auto; padding-left: 2; display: none; }
    FlagForm .flag-issue.-shown { display: block; }
    FlagForm .flag-issue.-error { color: $error; }
    FlagForm .flag-issue.-warning { color: $warning; }
    FlagForm .flag-other-title { column-span: 2; height: 2; padding-top: 1; color: $text-muted; text-style: italic; }
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
        self.last_flag: str | None = None  # the row of the field focused last: where the cursor is (or was)
        self._typed: set[str] = set()  # fields typed in since they took the focus: leaving one applies what it shows
        self._rebuilding = False
        self._render_lock = asyncio.Lock()  # one render at a time: a value is never set on a row still being built
        self._mounted = asyncio.Event()  # every row composed, each Select with its parts (set on mount)
        # The rows' finding lines (hidden until a finding) come a frame after the form's first one: the form's first
        # frame shows none, and building 8-14 hidden widgets was ~1 % of the panel's start (issue 34's cold start).
        self._lines_later = True
        self._issues_waiting: list[Issue] | None = None  # findings given before those lines were there
        # The fields of the form's first frame are stand-ins drawn like them (`SelectStandIn`, `InputStandIn`: 80-100 M
        # instructions less to the form-ready frame); the real fields take their places right after that frame.
        self._stand_ins: list[SelectStandIn | InputStandIn] = []
        self._take(flags or {})

    def _take(self, flags: Mapping[str, str | None]) -> bool:
        """Remember `flags`; True when the set of rows must change (a recompose). A flag turning into
        a switch or back only changes a placeholder, so the row (and a cursor in it) stays."""
        other = tuple(n for n in flags if n not in FORM_FLAGS)
        self._switches = {n for n, v in flags.items() if v is None}
        self._values = {**{n: flags.get(n) for n in FORM_FLAGS}, **{n: flags[n] for n in other}}
        reshaped = other != self._other
        self._other = other
        return reshaped

    def compose(self) -> ComposeResult:
        for name in FORM_FLAGS:
            yield from self._row(name)
        if self._other:
            yield FormLine("other flags in the unit", classes="flag-other-title")
        for name in self._other:
            yield from self._row(name)

    def _row(self, name: str) -> Iterator[Widget]:
        value = self._values.get(name)
        yield Label(name, classes="flag-name")
        yield self._field(name, value)
        if not self._lines_later:
            yield self._issue_line(name)

    @staticmethod
    def _issue_line(name: str) -> FormLine:
        return FormLine("", classes="flag-issue", id=widget_id("issue", name), markup=False)

    async def _add_issue_lines(self) -> None:
        """The real fields in their stand-ins' places and the finding line under each row, after the form's first
        frame (behind a render in progress: its rows are the ones to follow); then the findings given meanwhile."""
        async with self._render_lock:
            await self._fields_in_place()
            if not self.is_attached or not self._lines_later:
                return
            self._lines_later = False
            fields = {node.id: node for node in self.query("Input, Select") if node.id}
            with exit_held(self.app):  # an exit waits for them, as for the rows
                mounts = [self.mount(self._issue_line(name), after=field) for name in (*FORM_FLAGS, *self._other)
                          if (field := fields.get(widget_id("field", name))) is not None]
                for mounted in mounts:
                    await mounted
        waiting, self._issues_waiting = self._issues_waiting, None
        if waiting is not None and self.is_attached:
            self.show_issues(waiting)

    async def use_real_fields(self) -> None:
        """The real fields in the stand-ins' places (the form's first frame drew stand-ins); at once when they are
        there. Called by the form after its first frame, and by the main screen from its own message loop: a key's
        bindings wait there meanwhile (a Tab moves on from the real field, not from one being swapped)."""
        if self._stand_ins:
            async with self._render_lock:
                await self._fields_in_place()

    async def _fields_in_place(self) -> None:
        if not self.is_attached or not self.app.is_running:
            return  # the app closing (a q typed at start) or the form gone: nothing to swap
        stand_ins, self._stand_ins = self._stand_ins, []
        # built with their change events prevented (held by each until its mount: the Changed of a mount is a render);
        # not held over the awaits below, where it would hold back every Changed of the app (Textual's stack is shared)
        with self.prevent(Input.Changed, Select.Changed):
            pairs: list[tuple[Widget, Widget]] = [
                (stand_in, self._select(ALGORITHM_FLAG, stand_in.value) if isinstance(stand_in, SelectStandIn)
                 else self._input(stand_in.flag, stand_in.value)) for stand_in in stand_ins]
        with exit_held(self.app):  # an exit waits for the fields
            await swap_in(self, pairs)

    async def on_select_stand_in_opened(self, event: SelectStandIn.Opened) -> None:
        """A key or a click that opens the dropdown reached the stand-in: the real Select, opened."""
        event.stop()
        await self.use_real_fields()
        select = next(iter(self.query(Select)), None)
        if select is not None and not select.expanded:
            select.action_show_overlay()

    async def on_input_stand_in_typed(self, event: InputStandIn.Typed) -> None:
        """A key or a paste for a field reached its stand-in: the real field gets it, before the next key goes out."""
        event.stop()
        await self.use_real_fields()
        field = next(iter(self.query(f"#{widget_id('field', event.stand_in.flag)}")), None)
        if isinstance(field, Input):
            typed = event.event
            field.post_message(events.Paste(typed.text) if isinstance(typed, events.Paste)
                               else events.Key(typed.key, typed.character))

    def _select(self, name: str, value: str | None) -> Select[str]:
        """The algorithm's dropdown, compact, showing `value` (offered even when SGLang's list lacks it)."""
        options = [(c, c) for c in algorithm_choices()]
        if value and value not in dict(options):
            options.append((value, value))
        select: Select[str] = Select(options, value=value or Select.NULL, id=widget_id("field", name), prompt="(none)")
        make_compact(select, Select.compact)
        return select

    def _field(self, name: str, value: str | None) -> Widget:
        """A new field showing `value`; on the form's first frame a stand-in drawn like it."""
        if self._lines_later and not self.is_mounted:
            stand_in = (SelectStandIn(value, prompt="(none)", id=widget_id("first", name)) if name == ALGORITHM_FLAG
                        else InputStandIn(name, value=value or "", placeholder=self._placeholder(name),
                                          id=widget_id("first", name)))
            self._stand_ins.append(stand_in)
            return stand_in
        return self._select(name, value) if name == ALGORITHM_FLAG else self._input(name, value or "")

    def _input(self, name: str, value: str) -> FlagInput:
        """A new field showing `value`. Built with its change events prevented: the Changed a field
        posts on mount is a render, not an edit."""
        with self.prevent(Input.Changed):
            field = FlagInput(name, value=value, placeholder=self._placeholder(name), compact=True, id=widget_id("field", name))
        field.tooltip = flag_help(name) or None
        return field

    def _placeholder(self, name: str) -> str:
        return "(switch)" if name in self._switches else "(default)"

    def has_row(self, name: str) -> bool:
        """True when `name` has a field here (its issues show under it)."""
        return name in FORM_FLAGS or name in self._other

    @property
    def values(self) -> Mapping[str, str | None]:
        return dict(self._values)

    async def show_values(self, flags: Mapping[str, str | None]) -> None:
        """Make the fields show `flags` (the unit's current flags); adds/removes "other" rows.

        A render only: no `FlagEdited` comes of it, and the field that has focus keeps its own text
        (the person is typing there; what they type reaches the unit as their edit). Renders queue behind a
        rebuild in progress: its new rows are not composed until it ends (a Select without its label), and behind
        the form's own mount (a unit read from the host while the form was mounting set a Select's value before it
        had its label, or rebuilt rows still being composed: the panel stopped on NoMatches or DuplicateIds)."""
        async with self._render_lock:
            if self.is_attached and not self._mounted.is_set():
                await self._mounted.wait()
            await self._show_values(flags)

    def on_mount(self) -> None:
        self._mounted.set()  # Textual mounts a widget after its children: every row and its fields are there
        self.call_after_refresh(self._add_issue_lines)

    async def _show_values(self, flags: Mapping[str, str | None]) -> None:
        if self._take(flags):
            screen = self.screen if self.is_attached else None
            focused = screen.focused if screen is not None else None
            kept = widget_id("field", self._flag_of(focused.id) or "") if focused is not None and self in focused.ancestors else None
            if screen is not None and kept:
                # The field goes with its row. Held nowhere meanwhile (not moved to a neighbour by Textual), the
                # focus tells after the rebuild whether the user moved it (a tab key, Tab): then it stays there.
                screen.set_focus(None)
            before = screen.focused if screen is not None else None
            self._rebuilding = True
            try:
                with self.prevent(Input.Changed, Select.Changed), exit_held(screen.app if screen is not None else None):
                    await self.recompose()  # an exit waits for the new rows: torn down meanwhile, a Select raised
            finally:
                self._rebuilding = False
            wanted, self._focus_wanted = kept or self._focus_wanted, False
            if wanted and screen is not None and screen.focused is before:  # the user has not moved meanwhile
                self._refocus(kept)
            return
        # The fields found in one walk of the form: a query per field walked it ~15 times, ~50 ms of the panel's loop
        # on every unit a sweep pushed (issue 34).
        fields = {node.id: node for node in self.query("Input, Select, SelectStandIn, InputStandIn")
                  if node.id}
        for name, value in self._values.items():
            self._set_field(fields.get(widget_id("field", name)) or fields.get(widget_id("first", name)), name, value)

    def focus_first_field(self) -> None:
        """Focus the first field; while the rows are being rebuilt, as soon as they are back."""
        if self._rebuilding:
            self._focus_wanted = True
        else:
            self._refocus(None)

    def _refocus(self, field_id: str | None) -> None:
        matches = self.query(f"#{field_id}") if field_id else None
        target = matches.first() if matches else next(iter(self.query("Input, Select, SelectStandIn, InputStandIn")), None)
        if target is not None:  # now, not queued: a focus the user asks for meanwhile comes after and wins
            self.screen.set_focus(target, scroll_visible=False)

    def _set_field(self, field: Widget | None, name: str, value: str | None) -> None:
        """Render one value in its field; never posts an edit, never rewrites the text of a focused input."""
        if field is None:
            return
        with field.prevent(Input.Changed, Select.Changed):
            if isinstance(field, SelectStandIn):
                field.show(value)
            elif isinstance(field, InputStandIn):
                field.show(value or "", self._placeholder(name))
            elif isinstance(field, Select):
                if value and value not in algorithm_choices():
                    field.set_options([(c, c) for c in (*algorithm_choices(), value)])
                wanted = value if value else Select.NULL
                if field.value != wanted:
                    field.value = wanted
            elif isinstance(field, Input):
                field.placeholder = self._placeholder(name)
                if not (field.has_focus and name in self._typed) and field.value != (value or ""):
                    field.value = value or ""

    def show_issues(self, issues: Iterable[Issue]) -> None:
        """Inline messages under each field (`Issue.flag` names the row); clears the others. Before the rows have
        their lines (the form's first frame), shown as soon as they have."""
        if self._lines_later:
            self._issues_waiting = list(issues)
            return
        by_flag: dict[str, list[Issue]] = {}
        for issue in issues:
            by_flag.setdefault(issue.flag or "", []).append(issue)
        for line in self.query(".flag-issue").results(Static):
            name = next((n for n in (*FORM_FLAGS, *self._other) if widget_id("issue", n) == line.id), "")
            found = by_flag.get(name, [])
            line.set_class(bool(found), "-shown")
            line.set_class(any(i.level == "error" for i in found), "-error")
            line.set_class(bool(found) and all(i.level != "error" for i in found), "-warning")
            line.update("\n".join(f"{'✗' if i.level == 'error' else '!'} {clip_long_words(i.message)}" for i in found))

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The row the cursor is on (and stays "on" after escape): `f` fixes that row's finding."""
        flag = self._flag_of(event.widget.id)
        if flag is not None:
            self.last_flag = flag

    def _flag_of(self, widget_id_: str | None) -> str | None:
        for name in (*FORM_FLAGS, *self._other):
            if widget_id_ in (widget_id("field", name), widget_id("first", name)):  # the field, or its stand-in
                return name
        return None

    def _edited(self, name: str | None, value: str | None) -> None:
        """The person's edit, sent once. Not compared with `values` (the last render, which may lag
        behind the keys already typed): a value the unit already has changes nothing there."""
        if name is not None:
            self.post_message(self.FlagEdited(name, value))

    def on_input_changed(self, event: Input.Changed) -> None:
        """Live edits apply as you type; emptying a field waits for enter or for leaving the field (so
        retyping a value does not move the flag to the end of ExecStart). Only renders are prevented from
        posting Changed, so every one here was typed or pasted; in a burst only the latest is applied (one
        whose value the field has already moved past is superseded by the one still queued)."""
        event.stop()
        name = self._flag_of(event.input.id)
        if name is not None:
            self._typed.add(name)
        if event.value != event.input.value:
            return
        value = event.value.strip()
        if value:
            self._edited(self._flag_of(event.input.id), value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply_shown(event.input)

    def on_input_blurred(self, event: Input.Blurred) -> None:
        """Leaving a field (Tab, escape, a click elsewhere) applies what it shows: a field emptied and left
        removed nothing before (issue 35: the unit kept the flag, the diff said "No changes", p pushed it)."""
        event.stop()
        if self._flag_of(event.input.id) in self._typed:
            self._apply_shown(event.input)

    def _apply_shown(self, field: Input) -> None:
        """The field's text as the edit: its value, or the flag removed when it is empty (a bare switch stays)."""
        name = self._flag_of(field.id)
        self._typed.discard(name or "")
        value = field.value.strip()
        if value:
            self._edited(name, value)
        elif name not in self._switches:
            self._edited(name, None)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value != event.select.value:
            return  # superseded by a later choice
        value = None if event.value is Select.NULL else str(event.value)
        self._edited(self._flag_of(event.select.id), value)
