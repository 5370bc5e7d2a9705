"""Scroll bars drawn as strips (`ui.widgets.strip_scroll_bar`, issue 34: the journal's bar, redrawn at each batch
of lines, was the costliest part of a sweep's frames after the lines themselves): what each shows is what
Textual's own Rich-drawn bar shows, at every scroll position, both ways, focused or not."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import ScrollableContainer
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.widgets import Static

from specdec_tui.ui.widgets.strip_scroll_bar import StripScrollBarRender


class Scrolled(App[None]):
    CSS = "ScrollableContainer { height: 20; width: 60; } Static { width: 200; }"

    def compose(self) -> ComposeResult:
        with ScrollableContainer():
            for i in range(97):
                yield Static(f"row {i}")


def drawn(bar: ScrollBar, renderer: type[ScrollBarRender]) -> list[list[tuple[str, object]]]:
    bar.renderer = renderer
    bar.refresh()
    return [[(segment.text, segment.style) for segment in strip] for strip in bar.render_lines(bar.region.reset_offset)]


async def test_a_strip_drawn_bar_shows_what_textual_s_rich_drawn_bar_shows() -> None:
    async with Scrolled().run_test(size=(80, 30)) as pilot:
        box = pilot.app.query_one(ScrollableContainer)
        for x, y in ((0, 0), (0, 3.5), (17, 40.25), (140, 77), (70, 60)):
            box.scroll_to(x, y, animate=False)
            await pilot.pause()
            for bar in (box.vertical_scrollbar, box.horizontal_scrollbar):
                theirs, ours = drawn(bar, ScrollBarRender), drawn(bar, StripScrollBarRender)
                assert ours == theirs, (x, y, bar.vertical)
                assert len(ours) == bar.region.height and ours != []
        box.focus()
        await pilot.pause()
        for bar in (box.vertical_scrollbar, box.horizontal_scrollbar):
            assert drawn(bar, StripScrollBarRender) == drawn(bar, ScrollBarRender)
