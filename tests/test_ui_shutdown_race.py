"""Worker messages that arrive while the panel shuts down are dropped, never a NoMatches traceback (seen in CI: a
journal batch and a loop event landing while the main screen's widgets were being removed)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.loop.events import StepFailed
from specdec_tui.loop.states import Step
from specdec_tui.ui import messages as m

from .ui_helpers import offline_app


async def test_messages_during_shutdown_are_dropped(tmp_path: Path) -> None:
    app = offline_app()
    stop = asyncio.Event()

    async def flood() -> None:
        record = JournalRecord(cursor="1", timestamp=datetime.now(), message="[2026-12-03 08:00:00] hello")
        while not stop.is_set():
            app.post_message(m.JournalBatch([record], ["text"]))
            app.show_loop_event(StepFailed(Step.JOURNAL, "late"))
            await asyncio.sleep(0)

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        task = asyncio.create_task(flood())
        await pilot.pause(0.05)
    stop.set()
    await task
