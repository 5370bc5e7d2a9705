"""Text selected with the mouse across the panel's widgets copies every widget the drag passes over (Textual
walks the containers under the drag; one hidden to save paint time has no region, and what sat in it was
left out of the copy)."""

from __future__ import annotations

from datetime import datetime

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.ui.widgets.journal_pane import JournalPane

from .ui_helpers import offline_app, started, wait_for


async def test_a_drag_from_the_journal_lines_to_the_footer_copies_the_status_line_between() -> None:
    app = offline_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await pilot.press("2")
        pane = app.screen.query_one(JournalPane)
        pane.add_records([JournalRecord(cursor=f"c{i}", timestamp=datetime(2026, 1, 1), message=f"line {i}")
                          for i in range(60)])
        await wait_for(pilot, lambda: pane.shown_lines[-1:] == ["00:00:00 line 59"], "the lines on screen")
        await pilot.pause()
        log = pane.log_view.region
        start, end = (log.x + 2, log.bottom - 2), (10, app.size.height - 1)
        await pilot.mouse_down(None, offset=start)
        await pilot.hover(None, offset=end)
        await pilot.mouse_up(None, offset=end)
        await pilot.pause()
        copied = app.screen.get_selected_text() or ""
        assert "line 58" in copied and "following" in copied  # the last lines, then the status line under them
