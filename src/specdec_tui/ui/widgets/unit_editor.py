"""The raw systemd unit as an editable TextArea: the text here is what gets pushed, byte for byte."""

from __future__ import annotations

from textual.widgets import TextArea


class UnitEditor(TextArea):
    """A TextArea with ini highlighting when Textual has it, plain text otherwise."""

    DEFAULT_CSS = """
    UnitEditor { height: 1fr; scrollbar-size: 1 1; }
    """

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(text, id=id, soft_wrap=False, tab_behavior="focus", show_line_numbers=False)
        if "ini" in self.available_languages:
            self.language = "ini"
