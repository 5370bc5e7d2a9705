"""The edit against what runs on the host, as a colored unified diff (what a push will change)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

NO_CHANGES = "No changes: the edit matches the unit on the host."
HIDDEN_CHANGE = "Only a hidden value (an API key) differs from the unit on the host."


def colored_diff(diff: str) -> Text:
    """Rich text of a unified diff: additions green, removals red, hunk headers dim."""
    text = Text()
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line + "\n", style=style)
    return text


def make_diff(running: str, edited: str) -> str:
    """The shared `core.unit_diff.unified_diff`, labelled host → edited. Imported here, at the first edit: the
    form's first frame shows an unedited unit (cold start)."""
    from specdec_tui.core.unit_diff import unified_diff

    return unified_diff(running, edited, "host", "edited")


class DiffView(VerticalScroll):
    DEFAULT_CSS = """
    DiffView { height: 1fr; border: round $panel; scrollbar-size: 1 1; }
    DiffView > Static { width: auto; }
    DiffView > Static.-message { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = ""
        self.border_title = "diff vs host"

    def compose(self) -> ComposeResult:
        yield Static(NO_CHANGES, id="diff-body", classes="-message")  # wraps; a diff's lines scroll sideways

    def show(self, running: str, edited: str, *, hidden_change: bool = False) -> str:
        """Show the diff of `edited` against `running` and return its text. The texts come redacted;
        `hidden_change` says the real ones differ, so an identical pair is not called "no changes"."""
        self.diff = make_diff(running, edited) if running != edited else ""
        body = self.query_one("#diff-body", Static)
        body.update(colored_diff(self.diff) if self.diff else (HIDDEN_CHANGE if hidden_change else NO_CHANGES))
        body.set_class(not self.diff, "-message")
        return self.diff
