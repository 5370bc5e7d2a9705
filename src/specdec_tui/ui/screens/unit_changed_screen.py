"""The question when the host's unit changed outside this panel while the operator has an edit (issue 35: a push
from another terminal was never noticed, and `p` pushed over it): keep mine, take the host's, or show the diff
first. Dismisses with "keep" or "take"; escape keeps the edit and does nothing else."""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from specdec_tui.ui.screens.panel_modal import PanelModal

Answer = Literal["keep", "take"]


class UnitChangedScreen(PanelModal[Answer | None]):
    BINDINGS = [
        Binding("k", "answer('keep')", "Keep mine", id="unit-changed-keep"),
        Binding("t", "answer('take')", "Take the host's", id="unit-changed-take"),
        Binding("s", "show_diff", "Show diff", id="unit-changed-diff"),
        Binding("escape", "answer(None)", "Keep, later", id="unit-changed-later"),
    ]
    DEFAULT_CSS = """
    UnitChangedScreen { align: center middle; }
    UnitChangedScreen > Vertical { width: 76; max-width: 95%; height: auto; max-height: 90%;
                                   border: thick $warning; background: $surface; padding: 1 2; }
    UnitChangedScreen #unit-changed-question { margin-bottom: 1; }
    UnitChangedScreen #unit-changed-diff { height: auto; max-height: 14; margin-bottom: 1; display: none; }
    UnitChangedScreen #unit-changed-diff.-shown { display: block; }
    UnitChangedScreen Horizontal { height: auto; align-horizontal: right; }
    UnitChangedScreen Button { margin-left: 1; }
    """

    def __init__(self, question: str, diff: str) -> None:
        super().__init__()
        self.question = question
        self.diff = diff

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="unit-changed-question", markup=False)
            with VerticalScroll(id="unit-changed-diff"):
                yield Static(self.diff, markup=False)
            with Horizontal():
                yield Button("Show diff (s)", id="diff")
                yield Button("Take the host's (t)", id="take")
                yield Button("Keep mine (k)", id="keep", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#diff", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "diff":
            self.action_show_diff()
        else:
            self.dismiss("take" if event.button.id == "take" else "keep")

    def action_show_diff(self) -> None:
        self.query_one("#unit-changed-diff").add_class("-shown")
        self.query_one("#keep", Button).focus()

    def action_answer(self, answer: Answer | None) -> None:
        self.dismiss(answer)
