"""The unpushed edit of one unit on one host, kept across restarts: the one owner of when a draft is saved, offered
and discarded (the panel's form, its main screen and its "discard edit" key all ask it; `core.drafts` is the file).

A draft is saved with its API keys hidden (`core.redact`): they come back from the unit on the host when it is
restored (`loop.unit_push.with_secrets`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from specdec_tui.core import drafts
from specdec_tui.core.redact import redact_flags, redact_text


class EditFate(Enum):
    """What becomes of the form's edit when the host's unit changes (a push, a sweep's or a tune's apply, a
    rollback, a unit read again)."""

    FOLLOW = "follow"  # no edit in progress: the form shows the host's new unit
    LANDED = "landed"  # the host now runs the edit: nothing left to push, no draft
    KEPT = "kept"  # an edit in progress stays (and stays a draft); the diff is against the new unit


def edit_fate(edit: str, running_before: str, running_now: str) -> EditFate:
    """The one rule (issue 35: a sweep's pushes left the form on the pre-sweep unit, which then read as an edit
    nobody typed and the next push put back): an edit equal to the unit the host ran is no edit and follows the
    host; one the host now runs has landed; any other is the person's and is kept."""
    if edit == running_before:
        return EditFate.FOLLOW
    if edit == running_now:
        return EditFate.LANDED
    return EditFate.KEPT


@dataclass(frozen=True, slots=True)
class EditDraft:
    host: str
    unit: str

    def keep(self, text: str, *, dirty: bool) -> None:
        """An edit that differs from the host's unit is saved; one that does not (reverted by hand) is cleared."""
        if dirty:
            drafts.save_draft(self.host, self.unit, redact_text(text))
        else:
            drafts.clear_draft(self.host, self.unit)

    def offer(self, running: str) -> str | None:
        """The saved edit to offer when the host's unit is read, or None (none saved, or it is that unit)."""
        draft = drafts.load_draft(self.host, self.unit)
        return None if draft is None or draft == running else draft

    def discard(self) -> None:
        """The edit is pushed, declined or thrown away: no draft is offered again."""
        drafts.clear_draft(self.host, self.unit)


def draft_changes(draft: str, running: str) -> list[str]:
    """What restoring `draft` changes against the host's unit, one flag a line ("--a: 3 → 2"), keys hidden; a
    change outside the flags (or a draft that does not parse) is said as such (the restore question showed none).
    Its modules load here, on the first draft offered: the demo's first frame builds an EditDraft, not a diff."""
    from specdec_tui.core.compare import flag_diff
    from specdec_tui.core.unit import UnitFile
    from specdec_tui.core.unit_errors import UnitSyntaxError

    try:
        before, after = UnitFile.parse(running).flags(), UnitFile.parse(draft).flags()
    except UnitSyntaxError:
        return ["the unit text (it does not parse as a unit: the editor shows it)"]
    lines = [d.describe() for d in flag_diff(redact_flags(before), redact_flags(after))]
    return lines or ["the unit text outside the flags (the diff shows it)"]
