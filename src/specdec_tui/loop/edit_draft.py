"""The unpushed edit of one unit on one host, kept across restarts: the one owner of when a draft is saved, offered
and discarded (the panel's form, its main screen and its "discard edit" key all ask it; `core.drafts` is the file).

A draft is saved with its API keys hidden (`core.redact`): they come back from the unit on the host when it is
restored (`loop.unit_push.with_secrets`)."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_tui.core import drafts
from specdec_tui.core.redact import redact_text


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
