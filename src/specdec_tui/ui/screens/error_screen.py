"""A failure that needs the user's attention (a push refused by the host, a restart that never
turned healthy): what failed and what to do, in words. Never a traceback."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Static

from specdec_tui.ui.screens.panel_modal import PanelModal


class ErrorScreen(PanelModal[None]):
    BINDINGS = [Binding("escape,enter,q", "close", "Close", id="error-close")]
    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > Vertical {
        width: 72; max-width: 95%; height: auto; max-height: 90%; border: thick $error; background: $surface; padding: 1 2;
    }
    ErrorScreen #error-title { text-style: bold; color: $error; }
    ErrorScreen #error-detail { margin: 1 0; }
    """

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, id="error-title", markup=False)
            yield Static(self.detail, id="error-detail", markup=False)
            yield Button("Close", id="close", variant="error")

    def on_button_pressed(self, _: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
