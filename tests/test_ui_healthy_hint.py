""""Server is healthy. Press b to benchmark." is said only when b would benchmark: during a sweep (each value's
restart turns the server healthy) the hint was shown, and b answered "Wait for the sweep to finish before a
benchmark." (found in tmux on the demo at 80×24)."""

from __future__ import annotations

import pytest

from specdec_tui.loop.events import BusyChanged, Healthy
from specdec_tui.loop.states import Busy
from specdec_tui.ui.loop_messages import loop_message

from .ui_helpers import offline_app, record_notifications, started


@pytest.mark.parametrize(("busy", "offered"), [(Busy.SWEEP, False), (Busy.TUNE, False), (Busy.REPLAY, False),
                                               (Busy.PUSH, True), (Busy.IDLE, True)])
async def test_the_benchmark_hint_follows_what_b_would_do(busy: Busy, offered: bool) -> None:
    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.main.post_message(loop_message(BusyChanged(busy)))
        app.main.post_message(loop_message(Healthy(None)))
        for _ in range(5):
            await pilot.pause()
    healthy = [s for s in seen if s.startswith("Server is healthy.")]
    assert len(healthy) == 1, seen
    assert ("Press b to benchmark" in healthy[0]) is offered, healthy
