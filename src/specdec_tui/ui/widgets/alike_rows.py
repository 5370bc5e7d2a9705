"""Containers that draw one row of their background and repeat it (issue 34: a tab switch's frame).

Textual draws every widget of the screen map, containers too, whose rows lie under their children: the tabbed
content, its content switcher and each tab pane drew every row of their background on each switch (the layout
repaints them), ~25 µs a row through Textual's line pipeline — a fifth of a switch's CPU. A container with no
border, outline, keyline or hatch draws the same row at every height (its content is Textual's `Blank`), so the
first row asked for is drawn the usual way (its style, tint, opacity and the app's line filters) and repeated.
Anything else (a border, a keyline, a widget with content) is drawn as Textual draws it."""

from __future__ import annotations

from collections.abc import Callable

from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import TabPane

PLAIN_EDGES = ("", "none")


def rows_alike(widget: Widget) -> bool:
    """Every row of `widget` is the same strip: a container drawing its background and nothing on it."""
    styles = widget.styles
    if isinstance(widget, Screen) and styles.background.a < 1:
        return False  # a see-through screen shows the one below it
    return (widget.is_container and str(styles.keyline[0]) == "none" and styles.hatch in (None, "none")
            and all(kind in PLAIN_EDGES for kind, _ in (*styles.border, *styles.outline)))


def alike_rows(widget: Widget, crop: Region, draw: Callable[[Region], list[Strip]]) -> list[Strip]:
    """`crop` of `widget` drawn by `draw`: when its rows are alike, only the first row, repeated."""
    if crop.height > 1 and rows_alike(widget):
        return draw(Region(crop.x, crop.y, crop.width, 1)) * crop.height
    return draw(crop)


class AlikeRows(Widget):
    """A container drawn as one background row repeated when its rows are alike (`rows_alike`). A mixin placed
    after the Textual class (`class X(TabPane, AlikeRows)`): Textual names a widget's CSS types along its first
    bases only, so `TabPane` rules and queries still match."""

    def render_lines(self, crop: Region) -> list[Strip]:
        return alike_rows(self, crop, super().render_lines)


def draw_alike_rows_once(widget: Widget) -> None:
    """The same for a container Textual composes itself (TabbedContent's ContentSwitcher): its own `render_lines`
    wrapped on the instance, as the compositor calls it."""
    draw = widget.render_lines
    widget.render_lines = lambda crop: alike_rows(widget, crop, draw)  # type: ignore[method-assign]


class PlainTabPane(TabPane, AlikeRows):
    """A tab pane: its background, under its content, drawn as one row repeated."""
