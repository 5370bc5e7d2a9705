"""Scroll bars drawn as strips, not through Rich (issue 34: the sweep's own frames).

Textual's `ScrollBarRender` is a Rich renderable: each draw of a scroll bar goes through Rich's console (a styled
wrapper, the segments split into lines, a Strip made per row), ~57 µs a row on this machine, and the journal's
bar (43 rows at 160x48) is drawn again at every batch of lines it shows — second only to the journal's own lines
among what a sweep's frames draw. `ScrollBar.renderer` is Textual's public way to draw them otherwise: this one is
a Textual `Visual` (used as is, no Rich pass) that makes the same segments with Textual's own `render_bar` and
turns them into strips, the strip of a row kept for the next draw (a bar is a few distinct rows: track, thumb,
its two ends)."""

from __future__ import annotations

from typing import ClassVar

from rich.color import Color
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.css.styles import RulesMap
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

ROWS_KEPT = 512  # distinct rows kept (a few per bar and theme); all dropped when full


class StripScrollBarRender(ScrollBarRender, Visual):
    """Textual's scroll bar, its rows made as strips directly (the same segments and styles)."""

    _rows: ClassVar[dict[tuple[str, RichStyle], Strip]] = {}

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.thickness if self.vertical else container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return 1 if not self.vertical else max(1, self.virtual_size)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        # as ScrollBarRender.__rich_console__ with Textual's console options (width, height) and the widget's
        # base style applied under each segment's (Widget.post_render's Styled), rows cut at the width
        size = (height or 1) if self.vertical else width
        thickness = width if self.vertical else (height or 1)
        bar_style = self.style if isinstance(self.style, RichStyle) else RichStyle.parse(str(self.style))
        bar = self.render_bar(size=size, window_size=self.window_size, virtual_size=self.virtual_size,
                              position=self.position, vertical=self.vertical, thickness=thickness,
                              back_color=bar_style.bgcolor or Color.parse("#555555"),
                              bar_color=bar_style.color or Color.parse("bright_magenta"))
        base = style.rich_style
        if len(self._rows) > ROWS_KEPT:
            self._rows.clear()
        if self.vertical:
            return [self._row(segment, base, width) for segment in bar.segments][:size]
        line = Strip([Segment(segment.text, base + segment.style if segment.style else base)
                      for segment in bar.segments if segment.text != "\n"]).crop(0, width)
        return [line] * thickness

    def _row(self, segment: Segment, base: RichStyle, width: int) -> Strip:
        text = segment.text[:width]
        style = base + segment.style if segment.style else base
        key = (text, style)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = Strip([Segment(text, style)], len(text))
        return row


def draw_scroll_bars_as_strips() -> None:
    """Every scroll bar of the app drawn by `StripScrollBarRender` (Textual's documented class attribute)."""
    ScrollBar.renderer = StripScrollBarRender
