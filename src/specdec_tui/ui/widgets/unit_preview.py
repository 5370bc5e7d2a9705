"""The Config tab on the first frame: the running unit as plain text, until the form, editor and diff replace it.

The Config pane is ~75 widgets (a row per flag, the editor, the diff); building them before the first frame
made the panel's start ~3× a minimal Textual app's (issue 16). One Static costs nearly nothing, and the
operator sees their unit at once; `MainScreen.mount_form` swaps in the pane right after that frame.
"""

from __future__ import annotations

from textual.widgets import Static

from specdec_tui.core.redact import redact_text

WAITING = "(the unit is read from the host once connected)"


class UnitPreview(Static):
    """Read-only: nothing here takes a key or the focus (keys typed meanwhile reach the screen and the app)."""

    DEFAULT_CSS = """
    UnitPreview { height: 1fr; padding: 0 1; border: round $panel; color: $text-muted; }
    """

    def __init__(self, running_text: str, *, id: str | None = None) -> None:
        super().__init__(redact_text(running_text) or WAITING, id=id, markup=False)
        self.border_title = "unit"
