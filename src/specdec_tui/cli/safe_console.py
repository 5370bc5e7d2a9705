"""The rich Console every headless command prints through: text that came from outside (unit values, session
labels, model names, log lines, error text) never reaches the terminal as a command."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, HighlighterType, JustifyMethod, OverflowMethod, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from specdec_tui.core.terminal_codes import terminal_safe

# Rich's highlighter (numbers, strings, paths in colour) runs regexes whose time grows faster than the text: a
# 20,000-character line took 16 s, a 200,000-character label minutes. Longer text is printed plain.
HIGHLIGHT_LIMIT = 2_000


class SafeConsole(Console):
    """A rich Console whose text passes `terminal_safe` (segment by segment) before rich adds its own colours and
    cursor moves, which come after `render` as styles and control segments and so stay."""

    def render_str(self, text: str, *, style: str | Style = "", justify: JustifyMethod | None = None,
                   overflow: OverflowMethod | None = None, emoji: bool | None = None, markup: bool | None = None,
                   highlight: bool | None = None, highlighter: HighlighterType | None = None) -> Text:
        return super().render_str(text, style=style, justify=justify, overflow=overflow, emoji=emoji, markup=markup,
                                  highlight=False if len(text) > HIGHLIGHT_LIMIT else highlight,
                                  highlighter=highlighter)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or (safe := terminal_safe(segment.text)) is segment.text:
                yield segment
            else:
                yield Segment(safe, segment.style)
