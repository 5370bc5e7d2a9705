"""The panel's last word before the terminal: every line it draws passes `core.terminal_codes.terminal_safe`.

A unit's comments, `Description=` and flag values, a session's labels and model names, a server's error text all
reach widgets as plain strings; Textual writes a string's characters as they are, so an ESC or a C1 character
in one would be a command to the user's terminal (set the title, clear the screen, write the clipboard). As a
line filter (SpecdecApp.get_line_filters) this covers every widget, present and future, at one place.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from specdec_tui.core.terminal_codes import terminal_safe


class TerminalSafeFilter(LineFilter):
    """Removes escape sequences and control characters from the text of every drawn segment (a removed
    character that took a cell leaves a space, so the line keeps its width)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        out: list[Segment] | None = None
        for index, segment in enumerate(segments):
            text = segment.text
            safe = text if segment.control else terminal_safe(text)
            if safe is not text:
                if out is None:
                    out = segments[:index]
                lost = cell_len(text) - cell_len(safe)
                segment = Segment(safe + " " * lost if lost > 0 else safe, segment.style)
            if out is not None:
                out.append(segment)
        return segments if out is None else out
