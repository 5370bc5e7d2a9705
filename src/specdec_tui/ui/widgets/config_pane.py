"""The Config tab: the speculative flags as a form, the raw unit, validation and the diff to the host.

The unit text (`text`) is the one source of truth, and data flows one way: an edit (a field typed
in, a key in the raw editor, a fix, a restored draft) is an intent applied to the text once; the
form, the editor, the issues and the diff are then rendered from the text. A render never writes
back what it renders (no change event of a render is taken for an edit), never moves the editor's
cursor, and never replaces what the person is typing (a focused field keeps its own text; keys
typed in the editor that the pane has not seen yet are taken into the text before a form edit
applies). Every change is validated (`core.flags.validate`) and saved as a draft (debounced), so an
edit survives a crash or a quit. The first render shows its findings a frame after the form's own (issue 34's
cold start: judging a unit builds the release's parser, ~35 M instructions); `issues` judges on first read, so
whatever acts on the findings (f, a push) has them at once.

API keys never reach the screen or the draft file: the editor, the form and the diff show
`<redacted>` (`core.redact`), and whatever comes back from them gets the real key restored from the
edit or the host's unit, so `text` (what a push sends) keeps it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static, TextArea

from specdec_tui.core.flag_issue import Issue
from specdec_tui.core.redact import (
    REDACTED,
    SECRET_FLAGS,
    redact_flags,
    redact_text,
)
from specdec_tui.core.sglang_schema.schema import ReleaseSchema
from specdec_tui.core.unit import UnitFile
from specdec_tui.core.unit_errors import UnitEditError, UnitSyntaxError
from specdec_tui.loop.edit_draft import EditDraft, EditFate, edit_fate
from specdec_tui.loop.unit_push import with_secrets
from specdec_tui.ui.widgets.diff_view import DiffView
from specdec_tui.ui.widgets.flag_form import FlagForm
from specdec_tui.ui.widgets.unit_editor import UnitEditor

DRAFT_DEBOUNCE_S = 0.5
NARROW_COLUMNS = 100  # below it the form is given two thirds of the width


def syntax_issue(err: UnitSyntaxError) -> Issue:
    """A unit that does not parse, as an error of no flag (no fix): listed with the flag issues."""
    return Issue("error", None, f"the unit does not parse: {err}")


def _with_flag(unit: UnitFile, name: str, value: str | None) -> UnitFile:
    """`value` None removes the flag (when present); otherwise sets it."""
    if value is None:
        return unit.remove_flag(name)
    return unit.set_flag(name, value)


def describe_issue(issue: Issue) -> str:
    mark = "✗" if issue.level == "error" else "!"
    where = f"--{issue.flag}: " if issue.flag else ""
    fix = "  [f: apply fix]" if issue.fixable else ""
    return f"{mark} {where}{issue.message}{fix}"


def describe_fix(issue: Issue) -> str:
    """What `apply_fix` does for `issue`, in words: "--a 1, removed --b"."""
    changes = [f"--{n}" + ("" if v is None else f" {v}") for n, v in (issue.fix or {}).items()]
    return ", ".join(changes + [f"removed --{n}" for n in issue.remove])


def fix_offered(issues: list[Issue], at: str | None) -> Issue | str | None:
    """The finding `f` fixes: the one of the row the cursor is (or was last) on, else the only one with a fix.
    Words instead when that row's finding has no fix, or several rows have one (f fixed the first fixable
    finding, another flag than the one in error: issue 35). None when no finding has a fix."""
    fixable = sorted((i for i in issues if i.fixable), key=lambda i: i.level != "error")
    here = [i for i in issues if at is not None and i.flag == at]
    if here:
        own = [i for i in fixable if i.flag == at]
        return own[0] if own else f"The finding of --{at} has no fix to apply: type a value it allows."
    if len({i.flag for i in fixable}) > 1:
        named = ", ".join(dict.fromkeys(f"--{i.flag}" for i in fixable))
        return f"Several findings have a fix ({named}): put the cursor on the field whose fix you want, then f."
    return fixable[0] if fixable else None


def issue_summary(issues: list[Issue], has_row: Callable[[str | None], bool]) -> str:
    """"✗ 1 error, ! 1 warning (under the fields; f applies a fix)" and the issues without a form row."""
    errors = sum(1 for i in issues if i.level == "error")
    warnings = len(issues) - errors
    counts = [f"✗ {errors} error{'s' * (errors != 1)}"] if errors else []
    counts += [f"! {warnings} warning{'s' * (warnings != 1)}"] if warnings else []
    fixable = any(i.fixable for i in issues)
    rowless = [describe_issue(i) for i in issues if not has_row(i.flag)]
    if len(rowless) == len(issues):
        return "\n".join(rowless)
    head = ", ".join(counts) + " (under the fields" + ("; f applies a fix)" if fixable else ")")
    return "\n".join([head, *rowless])


class ConfigPane(Vertical):
    """Form + unit editor + issue list + diff. `draft`: where its unpushed edit is kept (None offline)."""

    DEFAULT_CSS = """
    ConfigPane { height: 1fr; }
    ConfigPane #config-columns { height: 1fr; }
    ConfigPane #config-left { width: 1fr; min-width: 36; }
    ConfigPane #config-right { width: 1fr; }
    ConfigPane.-narrow #config-left { width: 2fr; }
    ConfigPane #config-issues { height: auto; max-height: 6; padding: 0 1; border-top: hkey $panel; }
    ConfigPane #config-issues.-errors { color: $error; }
    ConfigPane #config-issues.-warnings { color: $warning; }
    ConfigPane #unit-editor { height: 2fr; }
    ConfigPane #diff-view { height: 1fr; }
    """

    @dataclass
    class Edited(Message):
        """The edited unit text changed (the app refreshes its "unsaved edit" state)."""

        text: str
        dirty: bool

    def __init__(self, running_text: str = "", *, draft: EditDraft | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.running_text = running_text
        self.text = running_text
        self.draft = draft
        self._issues: list[Issue] = []
        self._unjudged: UnitFile | None = None  # the unit rendered whose findings are not worked out yet
        self._findings_later = True  # the first render's findings come a frame after the form's (cold start)
        self.schema: ReleaseSchema | None = None  # the host's SGLang release once learned; None: the bundled 0.5.23
        self.diff = ""
        self._draft_timer: Timer | None = None
        self._draft_pending = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="config-columns"):
            with Vertical(id="config-left"):
                yield FlagForm(redact_flags(self._parsed_flags()), id="flag-form")
                issues = Static("", id="config-issues", markup=False)
                issues.display = False  # shown with the first findings (`_show_findings`), a frame after the form
                yield issues
            with Vertical(id="config-right"):
                yield UnitEditor(redact_text(self.text), id="unit-editor")
                yield DiffView(id="diff-view")

    def _parsed_flags(self) -> dict[str, str | None]:
        try:
            return UnitFile.parse(self.text).flags()
        except UnitSyntaxError:
            return {}

    def on_resize(self, event: events.Resize) -> None:
        """Below NARROW_COLUMNS the form takes two thirds: at 80 columns half left a value 10 cells (a model path
        read "Qwen/Qwen3"); the raw editor and the diff scroll and wrap."""
        self.set_class(event.size.width < NARROW_COLUMNS, "-narrow")

    async def on_mount(self) -> None:
        await self._refresh_views(update_editor=False)

    def focus_first_field(self) -> None:
        """The first flag field: where a user arriving on the Config tab starts."""
        self.query_one(FlagForm).focus_first_field()

    @property
    def _editor(self) -> UnitEditor:
        return self.query_one(UnitEditor)

    # -- state ---------------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        """True when the edit differs from what runs on the host (a push would change something)."""
        return self.text != self.running_text

    @property
    def issues(self) -> list[Issue]:
        """The findings of the unit shown (judged here on first read after a render)."""
        if self._unjudged is not None:
            from specdec_tui.core.flags import validate_unit  # the release's parser and rules: after the form's frame

            self._issues = list(validate_unit(self._unjudged, self.schema))
            self._unjudged = None
        return self._issues

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "error"]

    def first_fix(self) -> Issue | None:
        """The first issue that carries a fix, errors before warnings."""
        fixable = [i for i in self.issues if i.fixable]
        fixable.sort(key=lambda i: i.level != "error")
        return fixable[0] if fixable else None

    async def use_release(self, schema: ReleaseSchema) -> None:
        """Judge the unit by the host's SGLang release from now on (loop/sglang_release.py)."""
        if schema is not self.schema:
            self.schema = schema
            await self._refresh_views(update_editor=False)

    async def load_running(self, text: str, *, keep_edit: bool = False) -> None:
        """The host's unit changed (connect, push, rollback). The edit follows it unless `keep_edit`."""
        self.running_text = text
        if not keep_edit:
            self.text = text
        elif await self._take_editor_keys():
            return  # rendered with the keys taken
        await self._refresh_views(update_editor=not keep_edit)

    async def follow_host(self, text: str) -> EditFate:
        """The host's unit is now `text` (a push, a sweep's or tune's apply, a rollback, a read): the form follows
        it, or the edit has landed (its draft goes), or an edit in progress is kept (`loop.edit_draft.edit_fate`)."""
        await self._take_editor_keys()  # keys typed and not yet taken are part of the edit
        fate = edit_fate(self.text, self.running_text, text)
        await self.load_running(text, keep_edit=fate is EditFate.KEPT)
        if fate is EditFate.LANDED and self.draft is not None:
            self.draft.discard()
        self.post_message(self.Edited(self.text, self.dirty))
        return fate

    async def follow_port(self, text: str) -> None:
        """The host's unit is `text`, which differs from the one shown in its --port alone (the demo's own rewrite,
        no one's change): an edit keeps going with that port, so neither the diff nor a push puts the old one back."""
        from specdec_tui.loop.unit_watch import with_port_of

        await self._take_editor_keys()
        edited = self.dirty
        self.running_text = text
        self.text = with_port_of(self.text, text) if edited else text
        await self._refresh_views(update_editor=True)
        self.post_message(self.Edited(self.text, self.dirty))

    async def set_text(self, text: str) -> None:
        """Replace the edited text (draft restore, apply fix) and refresh everything."""
        self.text = self._with_secrets(text)
        await self._refresh_views(update_editor=True)
        self._changed()

    async def revert(self) -> None:
        """Discard the edit (the "discard edit" key): the host's unit everywhere again, and no draft kept."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_pending = False
        if self.draft is not None:
            self.draft.discard()
        self.text = self.running_text
        await self._refresh_views(update_editor=True)
        self.post_message(self.Edited(self.text, self.dirty))

    async def set_flag(self, name: str, value: str | None) -> bool:
        """Apply one flag change to the unit text; False (and a notification) if it cannot be."""
        if name in SECRET_FLAGS and value == REDACTED:
            return True  # the masked value shown in the form: the real key stays
        error = await self._edit(lambda unit: _with_flag(unit, name, value))
        if error is not None:
            self.notify(f"Cannot change --{name}: {error}. Fix the unit text first.", severity="error")
        return error is None

    async def apply_fix(self) -> str | None:
        """Apply the fix of the finding offered (`fix_offered`: the cursor's row, else the only one) with
        `core.flags.apply_fix` (`Issue.fix` sets, `Issue.remove` deletes); says what it did, or why not."""
        await self._take_editor_keys()  # the fix is for the text on screen
        issue = fix_offered(self.issues, self.query_one(FlagForm).last_flag)
        if not isinstance(issue, Issue):
            return issue
        from specdec_tui.core.flags import apply_fix

        error = await self._edit(lambda unit: apply_fix(unit, issue))
        if error is not None:
            return f"Could not apply the fix: {error}"
        return "Applied fix: " + describe_fix(issue)

    async def apply_edit(self, change: Callable[[UnitFile], UnitFile]) -> str | None:
        """One edit from outside the form (the doctor's fix); the error when the unit cannot take it."""
        return await self._edit(change)

    async def _edit(self, change: Callable[[UnitFile], UnitFile]) -> str | None:
        """Apply one intent to the current text, once; the error when the unit cannot take it.
        Keys already typed in the editor come first (they are older than this intent)."""
        await self._take_editor_keys()
        try:
            unit = change(UnitFile.parse(self.text))
        except (UnitSyntaxError, UnitEditError) as err:
            return str(err)
        if unit.text != self.text:
            await self.set_text(unit.text)
        return None

    async def _take_editor_keys(self) -> bool:
        """Take what the editor shows into `text` when it is ahead (keys whose Changed is still
        queued): an intent applied now must not undo them when the editor is rendered. True when
        there was something to take (and the views were refreshed)."""
        editor = self._editor
        if editor.text == redact_text(self.text):
            return False
        self.text = self._with_secrets(editor.text)
        await self._refresh_views(update_editor=False)
        self._changed()
        return True

    # -- views ---------------------------------------------------------------------------------
    async def _refresh_views(self, *, update_editor: bool) -> None:
        if update_editor:
            self._editor.show_text(redact_text(self.text))
        try:
            unit = UnitFile.parse(self.text)
            parsed = unit.flags()
        except UnitSyntaxError as err:
            self._issues, self._unjudged = [syntax_issue(err)], None
            flags = None
        else:
            self._unjudged = unit
            flags = parsed
        form = self.query_one(FlagForm)
        if flags is not None:
            await form.show_values(redact_flags(flags))
            if not self.is_attached or not self.app.is_running:
                return  # the app closing (or the host switched) while the rows were rebuilt: nothing left to show
        if self._findings_later:
            self._findings_later = False
            self.call_after_refresh(self._show_findings)
        else:
            self._show_findings()
        self.diff = self.query_one(DiffView).show(redact_text(self.running_text), redact_text(self.text), hidden_change=self.dirty)

    def _show_findings(self) -> None:
        """The findings under their rows and the count under the form (those of the unit shown now)."""
        if not self.is_attached or not self.app.is_running:
            return  # the app closed before the form's first frame: nothing to show them in
        self.query_one(FlagForm).show_issues(self.issues)
        self._show_issue_list()

    def _show_issue_list(self) -> None:
        """Issues of a form row are spelled out under that row; here a count, plus in full only what
        has no row (a unit that does not parse, a flag the form does not show)."""
        box = self.query_one("#config-issues", Static)
        form = self.query_one(FlagForm)
        box.update(issue_summary(self.issues, lambda flag: flag is not None and flag != "" and form.has_row(flag)))
        box.set_class(bool(self.errors), "-errors")
        box.set_class(bool(self.issues) and not self.errors, "-warnings")
        box.display = bool(self.issues)

    @on(FlagForm.FlagEdited)
    async def _form_edited(self, event: FlagForm.FlagEdited) -> None:
        event.stop()
        await self.set_flag(event.name, event.value)

    @on(TextArea.Changed, "#unit-editor")
    async def _text_edited(self, event: TextArea.Changed) -> None:
        """Keys typed (or pasted) in the editor: its current text is the edit. A burst posts one
        Changed per key; the first takes the whole burst, the rest find nothing new."""
        event.stop()
        if event.text_area.text == redact_text(self.text):
            return  # already taken (a burst, or a form edit that came first)
        self.text = self._with_secrets(event.text_area.text)
        await self._refresh_views(update_editor=False)
        self._changed()

    def _with_secrets(self, shown: str) -> str:
        """`shown` (from the editor, a draft, a fix) with `<redacted>` keys put back: from the edit
        first (a key typed earlier in this edit), else from the unit on the host."""
        return with_secrets(shown, self.text, self.running_text)

    # -- drafts --------------------------------------------------------------------------------
    def _changed(self) -> None:
        self.post_message(self.Edited(self.text, self.dirty))
        if self.draft is None:
            return
        self._draft_pending = True
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(DRAFT_DEBOUNCE_S, self.flush_draft)

    def flush_draft(self) -> None:
        """Write the pending draft now (also called on quit): a dirty edit is saved, a clean one cleared. An edit
        kept over a change of the host's unit is saved too (quitting said it was kept and wrote nothing)."""
        if self.draft is None or not (self._draft_pending or self.dirty):
            return
        self._draft_pending = False
        self.draft.keep(self.text, dirty=self.dirty)

    def on_unmount(self) -> None:
        self.flush_draft()
