"""The raw systemd unit as an editable TextArea: the text here is what gets pushed, byte for byte.

While it has focus, single keys (p, b, S, …) are text, not commands; the border title says so and
escape hands the focus back to the flag form, where they are commands again."""

from __future__ import annotations

from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from specdec_tui.ui.keymap import EDITOR_BINDINGS

TITLE_IDLE = "unit file"
TITLE_EDITING = "editing — esc to leave"


class UnitEditor(TextArea):
    """A TextArea with ini highlighting when Textual has it, plain text otherwise."""

    BINDINGS = EDITOR_BINDINGS
    DEFAULT_CSS = """
    UnitEditor { height: 1fr; scrollbar-size: 1 1; border-title-color: $text-muted; }
    UnitEditor:focus { border-title-color: $text-warning; border-title-style: bold; }
    """

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(text, id=id, soft_wrap=False, tab_behavior="focus", show_line_numbers=False)
        if "ini" in self.available_languages:
            self.language = "ini"
        self.border_title = TITLE_IDLE

    def show_text(self, text: str) -> None:
        """Render `text` (the unit, from the Config pane): no `Changed` comes of it, so it is never
        taken for an edit, and the cursor, the selection and the scroll position stay where they
        were (clamped to the new text)."""
        if self.text == text:
            return
        selection, scroll = self.selection, self.scroll_offset
        with self.prevent(TextArea.Changed):
            self.load_text(text)
            self.selection = Selection(self.clamp_visitable(selection.start), self.clamp_visitable(selection.end))
        self.scroll_to(scroll.x, scroll.y, animate=False, immediate=True)

    def on_focus(self) -> None:
        self.border_title = TITLE_EDITING

    def on_blur(self) -> None:
        self.border_title = TITLE_IDLE

    def action_leave(self) -> None:
        """Back to the flag form (its first field), where single keys are commands again."""
        from specdec_tui.ui.widgets.flag_form import FlagForm

        forms = self.screen.query(FlagForm)
        if forms:
            forms.first().focus_first_field()
        else:
            self.screen.set_focus(None)
