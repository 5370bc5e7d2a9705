"""Issue 16: a tab key is the panel's most common key, and under a journal flood its cost is the tail of key latency.
A switch lays the screen out once and paints what changed; it does not also repaint every row of the screen for
each move of the focus (Textual's `Screen.focused` repaints the whole screen by default: two full 160x48 renders a
switch, ~30-45 ms each on a 2-core machine)."""

from __future__ import annotations

from textual.widgets import TabbedContent

from specdec_tui.ui.textual_compat import full_renders_counted
from tests.ui_helpers import offline_app, started


async def test_a_tab_switch_shows_the_tab_and_moves_the_focus_without_repainting_the_whole_screen(monkeypatch) -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.pause(0.3)
        full_renders: list[int] = []
        with full_renders_counted(full_renders):
            for key, tab, focus_id in (("2", "journal", "journal-log"), ("3", "health", None), ("4", "bench", "bench-data"),
                                       ("2", "journal", "journal-log")):
                await pilot.press(key)
                await pilot.pause(0.1)
                assert app.screen.query_one(TabbedContent).active == tab
                if focus_id is not None:
                    assert app.screen.focused is not None and app.screen.focused.id == focus_id
            assert app.screen.query_one("#journal-pane").region.height > 40  # the journal fills the screen again
        assert full_renders == []
