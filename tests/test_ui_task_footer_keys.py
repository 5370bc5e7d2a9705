"""During a sweep (or a tune, replay, rate search) every host key is refused, so the footer does not offer them;
a host key pressed anyway still says why in words. The footer offered p, r, u, b and M throughout a sweep, and
Textual skips a hidden (or dimmed) binding without a word: the refusal is said by the app's key handler."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.config import UIConfig
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import FAST_PROFILE, demo_app, demo_idle, footer_text, hold_unit_read, record_notifications, wait_for

pytestmark = pytest.mark.timeout(120)
HOST_KEYS = {"p": "push", "r": "restart", "u": "rollback", "b": "benchmark", "M": "rate search"}
OFFERED = ("Push", "Restart", "Rollback", "Bench", "Rate")


async def test_the_footer_hides_the_host_keys_during_a_sweep_and_each_pressed_says_why(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=5.0)  # slow enough that the sweep is still running after the keys
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm("speculative-num-steps", "1..3", "1", "c1"),
                                                            FAST_PROFILE))
        app.push_screen(screen)  # the sweep starts as the screen mounts
        await wait_for(pilot, lambda: app.busy is Busy.SWEEP, "the sweep to start")
        await pilot.pause()
        during = footer_text(app)
        assert not any(word in during for word in OFFERED), during
        assert "Quit" in during and "Cancel / back" in during
        for key, what in HOST_KEYS.items():
            seen.clear()
            await pilot.press(key)
            await pilot.pause()
            assert f"Wait for the sweep to finish before a {what}." in seen, (key, seen)
        assert app.busy is Busy.SWEEP  # what was said was said during the sweep
        await pilot.press("escape")  # cancels the sweep (the screen stays, showing where it stopped)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the sweep to stop")
        await pilot.pause()
        assert all(word in footer_text(app) for word in OFFERED), footer_text(app)


async def test_a_remapped_host_key_says_why_and_its_old_key_is_not_taken_for_it(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=5.0, ui=UIConfig(keymap={"push": "P"}))
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        app.push_screen(SweepScreen(app.trial_loop, plan_from_form(
            SweepForm("speculative-num-steps", "1..3", "1", "c1"), FAST_PROFILE)))
        await wait_for(pilot, lambda: app.busy is Busy.SWEEP, "the sweep to start")
        await pilot.press("p")
        await pilot.pause()
        assert not any("before a push" in s for s in seen), seen
        await pilot.press("P")
        await pilot.pause()
        assert "Wait for the sweep to finish before a push." in seen, seen
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the sweep to stop")


async def test_the_sweep_holds_the_loop_from_its_first_step_while_the_host_is_slow_to_answer(tmp_path: Path) -> None:
    """The sweep claimed the trial loop only once it had read the host's unit (an SSH round trip, longer on a loaded
    machine): meanwhile the screen showed the sweep running and b started a benchmark under it. The read is held
    open here: the loop is the sweep's already, and b is refused in words."""
    app = demo_app(tmp_path, time_scale=5.0)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        loop = app.trial_loop
        assert loop is not None
        release = hold_unit_read(loop)  # the host slow to answer
        app.push_screen(SweepScreen(loop, plan_from_form(SweepForm("speculative-num-steps", "1..2", "1", "c1"), FAST_PROFILE)))
        await wait_for(pilot, lambda: app.busy is Busy.SWEEP, "the loop held by the sweep")
        await pilot.press("b")
        await wait_for(pilot, lambda: "Wait for the sweep to finish before a benchmark." in seen, "b refused in words")
        assert not app.bench_running
        release.set()
        await pilot.press("escape")  # cancels the sweep
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the sweep to stop", steps=2400)
