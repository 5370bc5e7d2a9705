"""A line across the Config form's two columns: a row's findings, the "other flags" title."""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import Static


class FormLine(Static):
    """A line across the form's two columns (a row's findings, the "other flags" title). Textual's grid measures an
    auto-height cell at its first column's width even when it spans more (a 3-line finding took 5 rows, the title
    one too many): measured here at the width it is given on screen, the form's."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return super().get_content_height(container, viewport, max(width, container.width - self.styles.gutter.width))
