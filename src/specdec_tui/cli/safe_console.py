"""The rich Console every headless command prints through: text that came from outside (unit values, session
labels, model names, log lines, error text) never reaches the terminal as a command."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

from specdec_tui.core.terminal_codes import terminal_safe


class SafeConsole(Console):
    """A rich Console whose text passes `terminal_safe` (segment by segment) before rich adds its own colours and
    cursor moves, which come after `render` as styles and control segments and so stay."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or (safe := terminal_safe(segment.text)) is segment.text:
                yield segment
            else:
                yield Segment(safe, segment.style)
