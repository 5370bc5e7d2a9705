"""Styles for DataTable cells that must stay readable in the cursor and zebra rows."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


def foreground_style(widget: Widget, component: str) -> Style:
    """`component`'s colour and text style without its background.

    A cell style with a background paints over the table's cursor and zebra rows (the Δ cell was
    unreadable in the highlighted row). Textual's `partial=True` drops the background too but also
    the blending of translucent colours (`$text-muted` came out white), so blend, then drop it."""
    full = widget.get_component_rich_style(component)
    return (Style.from_color(full.color) if full.color else Style()) + full.without_color
