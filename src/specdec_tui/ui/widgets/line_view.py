"""A scrolling view of many plain-text lines, painted from cached strips (the journal's log view).

Textual's `Log` made every visible line anew on every frame: a Rich `Text`, its highlighter's spans, a
render through the console (~180 µs a line on a 2-core machine), and a thread worker per write to measure
the new lines' width. Under a journal flood the view is re-painted up to ten times a second, so that was a
sixth of the panel's CPU, and the worker threads took the GIL from the keys (issue 16). Here a line is
turned into segments straight from the spans its painter gives (a few µs), the strip is kept by the line's
absolute number (so scrolling and repaints reuse it), and widths are counted on the spot (`len` for ASCII).

Selection (mouse drag, copy) works as in `Log`; while a selection exists lines are painted through Rich,
as `Log` paints them, with the selection's style on top. The text position each segment starts at (what the
selection reads under the mouse) is tagged only on a row Textual asks for by itself (`render_line` called for
the mouse), not on the rows of a frame: tagging cost a third of painting a row (a `Style` per segment, each
serialising its meta), and a frame's rows are never read for it.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

Painter = Callable[[str], Sequence[tuple[int, Style]]]  # a line → its runs: (end column, style), in order

# Control characters, shown as � (tabs are expanded): C0 and C1 (ESC and the 8-bit CSI among them), DEL. Textual's
# `Log` replaced only U+0000-U+0014, so a journal line's escape codes reached the terminal. Lines from a journal
# come without their escape sequences (`core.terminal_codes`); what is left of one is shown, never sent.
_CONTROL = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f]")
# Text whose every character takes one cell (ASCII, Latin, Greek, Cyrillic, box drawing: the decode columns'
# "│"), so a cut by columns is a cut by characters. Anything else is cut by cells, as Textual does.
_ONE_CELL_EACH = re.compile("[\u0020-\u007e\u00a0-\u02ff\u0370-\u0482\u2500-\u257f]*")
PAINTED_LINES_KEPT = 2048  # several screens of scrolling back and forth


def one_cell_each(text: str) -> bool:
    """Every character of `text` takes exactly one cell (then its columns are its characters)."""
    return text.isascii() or _ONE_CELL_EACH.fullmatch(text) is not None


def display_text(line: str) -> str:
    """The line as the terminal may show it: tabs expanded, control characters (an escape code's ESC too) as �."""
    if line.isprintable():
        return line
    return _CONTROL.sub("�", line.expandtabs())


def segments(text: str, base: Style, runs: Sequence[tuple[int, Style]]) -> list[Segment]:
    """`text` cut into its runs, each in `base` plus the run's style (the rest of the line, if the runs end
    early, in `base`)."""
    out: list[Segment] = []
    pos = 0
    for end, style in runs:
        if end > pos:
            out.append(Segment(text[pos:end], base + style))
            pos = end
    if pos < len(text):
        out.append(Segment(text[pos:], base))
    return out


def with_offsets(row: list[Segment], x: int, y: int) -> list[Segment]:
    """Each segment tagged with the text position it starts at (what Textual's selection reads under the mouse)."""
    out = []
    for text, style, _ in row:
        offset = Style.from_meta({"offset": (x, y)})
        out.append(Segment(text, style + offset if style else offset))
        x += len(text)
    return out


@dataclass(frozen=True, slots=True)
class PaintedLine:
    """A line's segments in the view's `base` style, kept while the line is (its cell length, and whether each
    of its characters takes one cell: then a cut is a slice)."""

    base: Style
    segments: list[Segment]
    length: int
    one_cell_each: bool

    def fit(self, start: int, width: int, pad: Style) -> list[Segment]:
        """Columns [start, start + width) of the line, padded with `pad` to `width`."""
        if start == 0 and self.length <= width:
            if self.length == width:
                return self.segments
            return [*self.segments, Segment(" " * (width - self.length), pad)]
        if not self.one_cell_each:  # wide or zero-width characters: cut by cells, as Textual does
            return list(Strip(self.segments, self.length).crop_extend(start, start + width, pad))
        end = start + width
        out: list[Segment] = []
        pos = 0
        for text, style, _ in self.segments:
            stop = pos + len(text)
            if stop > start and pos < end:
                out.append(Segment(text[max(start - pos, 0):min(end, stop) - pos], style))
            pos = stop
            if pos >= end:
                break
        if pos < end:
            out.append(Segment(" " * (end - max(pos, start)), pad))
        return out


class LineView(ScrollView, can_focus=True):
    """Lines oldest first, at most `max_lines` (the oldest leave first); `paint` gives each line's runs."""

    DEFAULT_CSS = """
    LineView {
        background: $surface;
        color: $text;
        &:focus { background-tint: $foreground 5%; }
    }
    """

    def __init__(self, *, max_lines: int, paint: Painter | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_lines = max(1, max_lines)
        self._lines: deque[str] = deque(maxlen=self.max_lines)
        self._dropped = 0  # lines that left the front since the view began: a line's number is _dropped + index
        self._width = 0
        self._paint = paint
        # An OrderedDict, not Textual's LRUCache: that one links its entries in a ring of lists, so each clear()
        # (every style change, selection, clear) left the whole ring — up to PAINTED_LINES_KEPT lines and their
        # segments — as cyclic garbage for a full collection to find while keys waited (issue 34).
        self._painted_lines: OrderedDict[int, PaintedLine] = OrderedDict()
        self._base: Style | None = None  # the view's own style, read at the start of each frame
        self._frame_width: int | None = None  # the view's width while a frame is painted (render_lines), else None

    @property
    def allow_vertical_scroll(self) -> bool:
        """Scrolling follows the lines, not the bar: with `overflow-y: auto` the bar appears only at the
        next layout, and Textual's default (no bar → no scroll) would leave a fresh burst unfollowed."""
        return self.is_scrollable and not self.disabled

    @property
    def lines(self) -> Sequence[str]:
        return self._lines

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def write_lines(self, lines: Iterable[str]) -> None:
        """Append lines (a string with newlines counts as several); the view repaints once."""
        new = [part for line in lines for part in (line.splitlines() or [""])]
        if not new:
            return
        widest = max(len(t) if t.isascii() else cell_len(t) for t in map(display_text, new))
        overflow = max(0, len(self._lines) + len(new) - self.max_lines)
        self._lines.extend(new)
        self._dropped += overflow
        self._width = max(self._width, widest)
        self._set_extent(Size(self._width, len(self._lines)))
        self.refresh()

    def _set_extent(self, size: Size) -> None:
        """The lines' extent. Only a scroll bar that comes or goes changes the layout; otherwise the bars take the
        new extent and the view repaints: `virtual_size` alone re-lays out the whole screen (~25 ms on a 2-core
        machine), on every write until `max_lines` are there (minutes of a server logging a few lines a second)."""
        if size == self.virtual_size:
            return
        if self.is_mounted and not self.is_on_screen:
            # a hidden tab's view (the journal behind the Bench tab all through a sweep): no layout now, the switch
            # that shows it lays the screen out and sets the bars from this extent (ScrollView._size_updated);
            # before, every write re-laid out the whole screen for a view no one saw (~9 ms each, issue 34)
            self.set_reactive(LineView.virtual_size, size)
            return
        view = self.scrollable_content_region.size
        bars_stay = (size.height > view.height) == self.show_vertical_scrollbar and (
            size.width > view.width) == self.show_horizontal_scrollbar
        if not (bars_stay and self.is_mounted and view):
            self.virtual_size = size
            return
        self.set_reactive(LineView.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = size.height
        if self.show_horizontal_scrollbar:
            self.horizontal_scrollbar.window_virtual_size = size.width

    def clear(self) -> None:
        self._dropped += len(self._lines)
        self._lines.clear()
        self._width = 0
        self._painted_lines.clear()
        self.virtual_size = Size(0, 0)
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._painted_lines.clear()

    # -- selection (as Log) --------------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self._lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._painted_lines.clear()
        self.refresh()

    # -- painting ------------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        """A frame's rows. Style and width once a frame, not once a row (each walks the widget's ancestors)."""
        self._base, self._frame_width = self.rich_style, self.size.width
        try:
            return super().render_lines(crop)
        finally:
            self._frame_width = None

    def render_line(self, y: int) -> Strip:
        """One row: the painted line cut to the view (one new Strip; Log made four or five a row, each with seven
        caches, and that was most of the garbage the collector had to walk under a flood). Outside a frame (Textual
        reading the text position under the mouse) each segment carries the position it starts at."""
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        in_frame = self._frame_width is not None
        width = self._frame_width if self._frame_width is not None else self.size.width
        base = (self._base if in_frame else None) or self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        row = self._painted(index, base).fit(scroll_x, width, base)
        return Strip(row if in_frame else with_offsets(row, scroll_x, index), width)

    def _painted(self, index: int, base: Style) -> PaintedLine:
        """The whole line painted, from the cache when its base style is the same."""
        selection = self.text_selection
        number = self._dropped + index
        if selection is None:
            cached = self._painted_lines.get(number)
            if cached is not None and cached.base == base:
                self._painted_lines.move_to_end(number)
                return cached
        text = display_text(self._lines[index])
        runs = self._paint(text) if self._paint is not None else ()
        if selection is None:
            line = PaintedLine(base, segments(text, base, runs), cell_len(text), one_cell_each(text))
            self._painted_lines[number] = line
            self._painted_lines.move_to_end(number)
            if len(self._painted_lines) > PAINTED_LINES_KEPT:
                self._painted_lines.popitem(last=False)
            return line
        rich_text = Text(text, no_wrap=True, style=base)
        start = 0
        for end, style in runs:
            rich_text.stylize(style, start, end)
            start = end
        span = selection.get_span(index)
        if span is not None:
            start, end = span
            rich_text.stylize(self.screen.get_component_rich_style("screen--selection"), start,
                              len(rich_text) if end == -1 else end)
        return PaintedLine(base, list(rich_text.render(self.app.console)), cell_len(text), one_cell_each(text))
