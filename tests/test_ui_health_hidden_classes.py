"""A Health pane off screen (another tab shown) keeps its sections' text for when it is shown, and its sections'
`-empty` classes too: toggled at once (a restart's wait line on and off, an error line), each toggle changed a
section's display and Textual laid the whole screen out — for a pane nobody could see, at every restart of a
sweep, three panes at a time (issue 34)."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Static

from specdec_tui.ui.widgets.health_pane import HealthPane

from .ui_helpers import offline_app, started


async def test_a_hidden_health_pane_lays_nothing_out_and_shows_its_sections_when_shown() -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        main = app.main
        await main.mount_tabs()
        await pilot.pause()
        panes = list(main.query(HealthPane))
        assert panes and not any(pane.is_on_screen for pane in panes)  # the Config tab is shown
        layouts: list[Screen[object]] = []
        main.screen_layout_refresh_signal.subscribe(app, layouts.append)
        for pane in panes:
            pane.start_wait(60.0)
        await pilot.pause()
        assert layouts == []
        for pane in panes:
            pane.end_wait()
            pane.start_wait(60.0)  # the next restart of a sweep
        await pilot.pause()
        assert layouts == []
        main.action_show_tab("health")
        for _ in range(3):
            await pilot.pause()
        pane = main.query_one("#health-pane", HealthPane)
        wait = pane.query_one("#health-wait", Static)
        assert pane.is_on_screen and not wait.has_class("-empty") and wait.region.height >= 1
        assert pane.wait_text.startswith("Waiting for ready:")
        pane.end_wait()
        await pilot.pause()
        assert wait.has_class("-empty") and pane.wait_text == ""
