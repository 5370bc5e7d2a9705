"""The first frame draws only the Config tab; the other tabs' content is mounted right after it (issue 16, cold
start). What a user does or a host says in between must come out as if every tab had been there from the start."""

from __future__ import annotations

from datetime import datetime

from textual import events
from textual.widgets import TabbedContent

from specdec_tui.hosts.base import JournalRecord, ServiceStatus
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.ui import messages as m

from .ui_helpers import offline_app, wait_for

# upstream: python/sglang/srt/entrypoints/http_server.py (the line SGLang logs once it serves)
READY_LINE = "[2026-03-01 09:00:43] The server is fired up and ready to roll!"


async def test_a_tab_key_pressed_at_start_shows_that_tab_filled_and_focused_and_types_nothing() -> None:
    app = offline_app()
    app.post_message(events.Key("5", "5"))  # typed before the app runs, as the driver delivers it: before the first frame
    async with app.run_test(size=(120, 40)) as pilot:
        tabs = app.main.query_one(TabbedContent)
        await wait_for(pilot, lambda: tabs.active == "trials" and app.focused is not None and app.focused.id == "trials-data",
                       "the Trials tab shown with its table focused")
        assert app.main.trials_list.trial_ids == [1]
        assert not app.config_pane.dirty  # the digit switched tabs; it did not land in a flag field


async def test_what_the_host_says_before_the_later_tabs_exist_is_shown_not_dropped() -> None:
    app = offline_app()
    status = ServiceStatus(unit="sglang-demo.service", active_state="active", sub_state="running")
    # queued before the app runs: handled before the main screen's first frame, so before its later tabs exist
    app.post_message(m.HealthChanged(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, model="qwen")))
    app.post_message(m.JournalBatch([JournalRecord(cursor="1", timestamp=datetime(2026, 3, 1, 9, 0, 43), message=READY_LINE)]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.main.tabs_mounted, "every tab mounted")
        await pilot.pause()
        assert {view.state for view in app.main.health_views} == {"ready"}  # the Health tab and both side copies
        assert any("fired up and ready to roll" in line for line in app.main.journal_pane.shown_lines)
