"""A stand-in for the Config form's algorithm dropdown on the form's first frame (issue 34's cold start).

Textual's `Select` is five widgets (the current value's box, its label, two arrows and an `OptionList` overlay kept
hidden), each styled and laid out, and two of them bring stylesheets of their own to parse: ~70 M instructions of
the form-ready frame, for one row that shows one word. The form draws this one widget there instead, drawn as the
compact Select draws itself (`tests/test_ui_select_stand_in.py` compares every segment, focused or not, with a
value or the prompt), and puts the real Select in its place right after that frame (`FlagForm`). Until then it
takes the keys the Select takes (enter, down, space, up, a click: the dropdown is opened, on the real Select) and
lets every other key go on, as the Select does.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

ARROW = " ▼"  # Select's down arrow: one cell after one of padding


class SelectStandIn(Widget, can_focus=True):
    """The current value (or `prompt`) and the arrow, in the compact Select's colours. A key or click that opens the
    dropdown posts `Opened`: the form puts the real Select in its place and opens it."""

    BINDINGS = [Binding("enter,down,space,up", "open", "Show menu", show=False)]  # Select's own keys
    COMPONENT_CLASSES = {"select-stand-in--dim"}
    # Select's compact look: its box (SelectCurrent) has the background, one cell of padding on the right and a
    # tint when the Select has the focus; the label is dimmed while there is no value, the arrow always.
    DEFAULT_CSS = """
    SelectStandIn { height: 1; width: 1fr; padding: 0 1 0 0; color: $foreground; background: $surface;
                    pointer: pointer; }
    SelectStandIn:focus { background-tint: $foreground 5%; }
    SelectStandIn > .select-stand-in--dim { color: $foreground 50%; }
    SelectStandIn:ansi { background: ansi_default; }  /* the label and arrow keep their colours, as on Select */
    """

    class Opened(Message):
        """Open the dropdown (on the real Select)."""

    def __init__(self, value: str | None, *, prompt: str, id: str) -> None:
        super().__init__(id=id)
        self.value = value
        self.prompt = prompt

    def show(self, value: str | None) -> None:
        """Show `value` (a render of the unit: the real Select is not there yet)."""
        if value != self.value:
            self.value = value
            self.refresh()

    def render_line(self, y: int) -> Strip:
        """The label, then blank cells to the arrow, as Select's label and arrow widgets draw them: the text in its
        colour, the blank cells in the background only."""
        if y != 0:
            return Strip.blank(self.content_size.width, self.rich_style)
        text_style, dim = self.rich_style, self.get_component_rich_style("select-stand-in--dim")
        blank = Style(bgcolor=text_style.bgcolor)
        width = max(0, self.content_size.width - len(ARROW))
        label = set_cell_size(self.value or self.prompt, width).rstrip(" ")
        segments = [Segment(label, text_style if self.value else dim), Segment(" " * (width - cell_len(label)), blank),
                    Segment(" ", blank), Segment(ARROW[1:], dim)]
        return Strip(segments, self.content_size.width)

    def action_open(self) -> None:
        self.post_message(self.Opened())

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Opened())
