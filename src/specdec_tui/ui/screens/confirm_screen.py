"""A yes/no question as a modal (rollback, quit with an unpushed edit, push during a benchmark).
Dismisses with True for yes, False for no; `y`/`n`/escape work without the mouse."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from specdec_tui.ui.screens.panel_modal import PanelModal


class ConfirmScreen(PanelModal[bool]):
    # "No" has the focus (Textual's public AUTO_FOCUS): a query in on_mount raised NoMatches when the app closed
    # while the question was being mounted (CI: a test ended on the question's arrival)
    AUTO_FOCUS = "#no"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmScreen #confirm-question { margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="confirm-question")
            with Horizontal():
                yield Button(f"{self.no_label} (n)", id="no")
                yield Button(f"{self.yes_label} (y)", id="yes", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
