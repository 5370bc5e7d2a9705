"""The journal pane's log view: a `LineView` whose lines are coloured by SGLang kind (decode, prefill, errors,
markers, …, from the `journal--*` component classes, so themes colour them), and which tells its pane when the
user scrolls away from the bottom or back (to pause or resume following)."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style

from specdec_tui.ui.widgets.journal_lines import line_runs
from specdec_tui.ui.widgets.line_view import LineView


class JournalLog(LineView):
    """The journal's lines (`LineView`), coloured by SGLang kind; reports scrolling (to pause/resume following)."""

    COMPONENT_CLASSES = {
        "journal--decode",
        "journal--prefill",
        "journal--number",
        "journal--error",
        "journal--ready",
        "journal--startup_summary",
        "journal--access",
        "journal--marker",
        "journal--time",
    }
    DEFAULT_CSS = """
    JournalLog {
        height: 1fr;
        /* A bar only when lines do not fit; long lines still scroll sideways (← →) but without a bar eating
           a row of a small pane. */
        overflow-y: auto;
        overflow-x: auto;
        scrollbar-size-horizontal: 0;
        & > .journal--decode { color: $text; }
        & > .journal--prefill { color: $text-muted; }
        & > .journal--number { color: $accent; text-style: bold; }
        & > .journal--error { color: $text-error; background: $error-muted; text-style: bold; }
        & > .journal--ready { color: $text-success; text-style: bold; }
        & > .journal--startup_summary { color: $text-success; }
        & > .journal--access { color: $text-muted; }
        & > .journal--marker { color: $text-primary; text-style: bold; }
        & > .journal--time { color: $text-muted; }
    }
    """

    def __init__(self, *, max_lines: int, on_scrolled: Callable[[bool], None], id: str | None = None,
                 known_kind: Callable[[str], str | None] = lambda _: None) -> None:
        super().__init__(max_lines=max_lines, paint=self._runs, id=id)
        self._on_scrolled = on_scrolled
        self._known_kind = known_kind
        self._styles: dict[tuple[str, ...], Style] = {}  # component names → their styles laid in order, now

    def _runs(self, plain: str) -> list[tuple[int, Style]]:
        return [(end, self._style(names)) for end, names in line_runs(plain, self._known_kind(plain))]

    def _style(self, names: tuple[str, ...]) -> Style:
        style = self._styles.get(names)
        if style is None:
            style = self._styles[names] = Style.combine(
                [Style.null(), *(self.get_component_rich_style(f"journal--{name}") for name in names)])
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()  # a theme or CSS change: the components' styles are read again

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._on_scrolled(self.is_vertical_scroll_end)
