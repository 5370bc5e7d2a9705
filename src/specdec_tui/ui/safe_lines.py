"""The panel's last word before the terminal: every line it draws passes `core.terminal_codes.terminal_safe`.

A unit's comments, `Description=` and flag values, a session's labels and model names, a server's error text all
reach widgets as plain strings; Textual writes a string's characters as they are, so an ESC or a C1 character
in one would be a command to the user's terminal (set the title, clear the screen, write the clipboard). As a
line filter (SpecdecApp.get_line_filters) this covers every widget, present and future, at one place.
"""

from __future__ import annotations

from collections.abc import Sequence

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


class FilterChain(LineFilter):
    """Several line filters as one: Textual makes a new `Strip` (seven caches each) for every filter a drawn line
    passes, so Textual's colour filter then the terminal-safe one made two per line of every repaint — a sixth of
    a frame during a sweep (issue 34, bench/sweep_keys.py). Chained, a line is filtered into one strip."""

    def __init__(self, filters: Sequence[LineFilter]) -> None:
        super().__init__()
        self.filters = tuple(filters)

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        for line_filter in self.filters:
            segments = line_filter.apply(segments, background)
        return segments


class SafeLineFilters:
    """The app's filters, chained, the terminal-safe one last; one chain per set of enabled filters, so a strip's
    filter cache (keyed by the filter object) keeps answering across frames."""

    def __init__(self) -> None:
        self.terminal_safe = TerminalSafeFilter()
        self._chain = FilterChain([self.terminal_safe])

    def chain(self, enabled: Sequence[LineFilter]) -> list[LineFilter]:
        if self._chain.filters[:-1] != tuple(enabled):
            self._chain = FilterChain([*enabled, self.terminal_safe])
        return [self._chain]
