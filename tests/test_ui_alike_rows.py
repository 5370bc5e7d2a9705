"""The tab containers draw one row of their background and repeat it (issue 34, point 3: a tab switch's frame).
The tabbed content, its content switcher and the tab panes lie under their children, and each switch drew every
row of their backgrounds; they now draw one. Counted through public APIs (a widget's `render_line`, which Textual
calls for each row it draws), and what they show compared with Textual's own drawing (`Widget.render_lines`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static, TabbedContent, TabPane

from specdec_tui.ui.widgets.alike_rows import AlikeRows, rows_alike
from tests.test_report_html import seed_session

from .ui_helpers import offline_app, started


def containers(app: App[None]) -> list[Widget]:
    """The tab containers, and the tabs' own (their tables', the journal's and the health views' boxes)."""
    return list(dict.fromkeys([
        app.screen, app.screen.query_one(TabbedContent), app.screen.query_one(ContentSwitcher), *app.screen.query(TabPane),
        *(widget for widget in app.screen.walk_children(Widget) if isinstance(widget, AlikeRows))]))


@contextmanager
def rows_drawn(widgets: list[Widget]) -> Iterator[dict[str, int]]:
    """How many rows each widget draws meanwhile (Textual draws a row through the widget's `render_line`)."""
    counts = {str(widget): 0 for widget in widgets}
    for widget in widgets:
        draw: Callable[[int], Strip] = widget.render_line

        def counted(y: int, widget: Widget = widget, draw: Callable[[int], Strip] = draw) -> Strip:
            counts[str(widget)] += 1
            return draw(y)

        widget.render_line = counted  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        for widget in widgets:
            del widget.render_line


async def test_a_switch_draws_one_background_row_a_container_and_shows_what_textual_draws() -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        for key in "234561":
            await pilot.press(key)
            await pilot.pause()
        for key in "2456":
            with rows_drawn(containers(app)) as counts:
                await pilot.press(key)
                await pilot.pause()
                await pilot.pause()
            assert max(counts.values()) <= 4, f"key {key}: rows drawn {counts}"  # one a frame (the switch, the focus)
            for widget in containers(app):
                if widget.display and widget.region:
                    crop = widget.region.reset_offset
                    assert widget.render_lines(crop) == Widget.render_lines(widget, crop), widget


class Boxes(App[None]):
    CSS = "#bordered { border: round red; height: 5; } #plain { height: 5; background: blue 50%; }"

    def compose(self) -> ComposeResult:
        class Box(Vertical, AlikeRows):
            pass

        yield Box(Static("x"), id="bordered")
        yield Box(Static("y"), id="plain")


async def test_only_a_container_with_no_border_draws_its_rows_alike() -> None:
    async with Boxes().run_test() as pilot:
        bordered, plain = pilot.app.query_one("#bordered"), pilot.app.query_one("#plain")
        assert not rows_alike(bordered) and rows_alike(plain)
        assert not rows_alike(pilot.app.query_one(Static))  # content: drawn as Textual draws it
        for box in (bordered, plain):
            crop = box.region.reset_offset
            assert box.render_lines(crop) == Widget.render_lines(box, crop)
