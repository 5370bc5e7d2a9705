"""What a frame repaints (issue 16): Textual repaints every widget under a changed region, covered or not, so the
panel's bare containers (the tabs, their switcher, each tab's pane, the journal pane) paint nothing of their own
(`visibility` in app.tcss) and only what is in them is painted. The snapshots show the cells are the same."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from textual._styles_cache import StylesCache
from textual.widget import Widget

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.ui.widgets.journal_pane import JournalPane
from tests.ui_helpers import offline_app, started, wait_for

BARE = {"MainTabs", "ContentSwitcher", "TabPane", "JournalPane"}


@pytest.fixture
def painted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Widget classes painted (a `render_widget` call) since the counter was last cleared."""
    seen: Counter[str] = Counter()
    original = StylesCache.render_widget

    def counted(self: StylesCache, widget: Widget, crop: object) -> object:
        seen[type(widget).__name__] += 1
        return original(self, widget, crop)  # type: ignore[arg-type]

    monkeypatch.setattr(StylesCache, "render_widget", counted)
    return seen


async def test_new_journal_lines_repaint_the_lines_not_the_containers_around_them(painted: Counter[str]) -> None:
    app = offline_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await pilot.press("2")
        pane = app.screen.query_one(JournalPane)
        await wait_for(pilot, lambda: pane.log_view.region.height > 0, "the Journal tab")
        await pilot.pause()
        painted.clear()
        pane.add_records([JournalRecord(cursor=f"c{i}", timestamp=datetime(2026, 1, 1), message=f"line {i}")
                          for i in range(200)])
        await wait_for(pilot, lambda: pane.shown_lines[-1:] == ["00:00:00 line 199"], "the lines on screen")
        await pilot.pause()
        assert painted["JournalLog"] >= 1
        assert not BARE & set(painted), painted


async def test_a_tab_switch_paints_the_tab_not_the_containers_it_sits_in(painted: Counter[str]) -> None:
    app = offline_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await pilot.press("3")
        await pilot.pause()
        painted.clear()
        await pilot.press("2")
        await wait_for(pilot, lambda: painted["JournalLog"] > 0, "the journal painted")
        assert not BARE & set(painted), painted
