"""p again while a push restarts the server says to wait for it: it said "Nothing to push: the edit matches the unit
on the host. Press r to restart anyway." — the edit had landed, but r was refused ("Wait for the push to finish
before a restart") (tmux at 80×24: an edit, escape, p p)."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.loop.busy import Busy

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for


async def test_p_during_a_push_s_restart_says_to_wait_not_to_press_r(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_ready(pilot, seen)
        await app.config_pane.set_flag("speculative-num-steps", "2")
        app.screen.set_focus(None)
        await pilot.press("p")
        loop = app.trial_loop
        assert loop is not None
        await wait_for(pilot, lambda: not app.config_pane.dirty and loop.busy is not Busy.IDLE, "the push to land")
        before = len(seen)
        await pilot.press("p")
        await wait_for(pilot, lambda: len(seen) > before, "p's answer")
        assert loop.busy is not Busy.IDLE, "the push ended before the second p: nothing was tested"
        said = seen[before:]
        assert not any("Press r to restart anyway" in s for s in said), said
        assert any(s.endswith("Wait for the push to finish before a restart.") for s in said), said
        await wait_for(pilot, lambda: loop.busy is Busy.IDLE, "the push to end", steps=2400)
