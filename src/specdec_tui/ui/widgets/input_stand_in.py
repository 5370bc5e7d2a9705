"""Stand-ins for the Config form's value fields on the form's first frame (issue 34's cold start).

A Textual `Input` is a scrolling widget with a dozen key bindings, a blinking cursor and four component styles
worked out as it is styled: the form's 13 cost ~70 M instructions of the form-ready frame (with the Select's stand-in:
80-100 M less), to show a value each. The form draws these instead, drawn as the compact Input draws itself when it has no focus
(`tests/test_ui_input_stand_in.py` compares the cells, a value, a long value, the placeholder), and puts the real
fields in their place right after that frame (`FlagForm`).

A key typed meanwhile into a stand-in that has the focus (Tab reached it) is what the field would have taken: a
character, a paste, or a key of the field's own bindings (BackSpace, End, ...). The stand-in keeps it from going on
and posts `Typed`; the form puts the real field in place and gives it that key, before the next key goes out
(`ui.input_order` sends it once this one's way is walked, and the form is on that way). Every other key (Tab, escape,
the app's keys) goes on as from the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input


def input_keys() -> frozenset[str]:
    """The keys Textual's Input binds itself (its public `BINDINGS`; `FlagInput` adds none)."""
    return frozenset(key.strip() for binding in Input.BINDINGS if isinstance(binding, Binding)
                     for key in binding.key.split(","))


class InputStandIn(Widget, can_focus=True):
    """`value`, or `placeholder` dimmed, as a compact Input without the focus draws them."""

    COMPONENT_CLASSES = {"input-stand-in--placeholder"}
    DEFAULT_CSS = """
    InputStandIn { height: 1; width: 1fr; color: $foreground; background: $surface; pointer: text; }
    InputStandIn:focus { background-tint: $foreground 5%; }
    InputStandIn > .input-stand-in--placeholder { color: $text-disabled; }
    InputStandIn:ansi { color: ansi_default; background: ansi_default; }
    InputStandIn:ansi > .input-stand-in--placeholder { text-style: dim; color: ansi_default; }
    """
    KEYS = input_keys()

    @dataclass
    class Typed(Message, bubble=False):
        """A key or a paste the field would have taken, for the real field (sent to the form)."""

        stand_in: InputStandIn
        event: events.Key | events.Paste

    def __init__(self, flag: str, *, value: str, placeholder: str, id: str) -> None:
        super().__init__(id=id)
        self.flag = flag
        self.value = value
        self.placeholder = placeholder

    def show(self, value: str, placeholder: str) -> None:
        """Show `value` (a render of the unit: the real field is not there yet)."""
        if (value, placeholder) != (self.value, self.placeholder):
            self.value, self.placeholder = value, placeholder
            self.refresh()

    def render_line(self, y: int) -> Strip:
        """As `Input.render_line` draws a field without the focus (textual 8.2.8)."""
        if y != 0:
            return Strip.blank(self.size.width, self.rich_style)
        console, width = self.app.console, self.content_size.width
        if not self.value:
            placeholder = Text(self.placeholder, justify="left", end="")
            placeholder.stylize(self.get_component_rich_style("input-stand-in--placeholder"))
            strip = Strip(console.render(placeholder, self.app.console_options.update_width(width + 1)))
        else:
            value = Text(self.value, no_wrap=True, overflow="ignore", end="")
            strip = Strip(console.render(value, self.app.console_options.update_width(value.cell_len + 1)))
            strip = strip.crop(0, width + 1).extend_cell_length(width + 1)
        return strip.apply_style(self.rich_style)

    def on_key(self, event: events.Key) -> None:
        if event.is_printable or event.key in self.KEYS:
            self._typed(event)

    def on_paste(self, event: events.Paste) -> None:
        self._typed(event)

    def _typed(self, event: events.Key | events.Paste) -> None:
        event.stop()
        event.prevent_default()
        if self.parent is not None:  # to the form itself: this stand-in may be gone before a message of its own bubbles
            self.parent.post_message(self.Typed(self, event))
