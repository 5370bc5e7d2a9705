"""Recovery from a failed start in the panel (Pilot, the real demo host and simulator): a pushed unit whose start
fails is answered by a dialog naming the cause and the ladder's next rung; yes applies it and restarts (the host
comes up on the rung), a start no rung fixes stops after two tries with the host back on its last good unit, and
no leaves the host as the failed push's rollback left it."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.unit import UnitFile
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for

pytestmark = pytest.mark.timeout(240)


def question_of(app: SpecdecApp) -> str:
    screen = app.screen
    return screen.question if isinstance(screen, ConfirmScreen) else ""


async def push_failing(pilot, app: SpecdecApp, flags: dict[str, str | None]) -> str:
    """The demo healthy, then its unit with `flags` pushed (as p does); returns the good unit it ran before."""
    good = app.config_pane.running_text
    assert app.link is not None and good
    app.link.push(UnitFile.parse(good).set_flags(flags).text)
    await wait_for(pilot, lambda: "next rung" in question_of(app), "the recovery question", steps=2400)
    return good


async def test_yes_applies_the_named_rung_and_the_host_comes_up_on_it(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        await push_failing(pilot, app, {"mem-fraction-static": "0.1"})
        text = question_of(app)
        assert "Loaded weights leave no GPU memory" in text  # the cause line
        rung = text.split("raise --mem-fraction-static to ")[1][:4]
        assert float(rung) > 0.1 and "At most 2 tries" in text and "last good unit" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n.startswith("Recovered in 1 restart(s)") for n in notes), "recovered",
                       steps=2400)
        assert app.host is not None
        unit = UnitFile.parse(await app.host.read_unit())
        assert unit.get_flag("mem-fraction-static") == rung and (await app.host.status()).is_running
        assert not any(isinstance(s, ConfirmScreen) for s in app.screen_stack)


async def test_a_start_no_rung_fixes_ends_after_two_tries_back_on_the_good_unit(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        good = await push_failing(pilot, app, {"mem-fraction-static": "0.9", "sim-fail": "cuda-graph-oom"})
        assert "Capture cuda graph failed" in question_of(app) and "lower --mem-fraction-static to 0.80" in question_of(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n.startswith("Not recovered after 2 restart(s)") for n in notes),
                       "the recovery's end", steps=3600)
        [said] = [n for n in notes if n.startswith("Not recovered")]
        assert "try 1: --mem-fraction-static 0.80 did not come up" in said
        assert "try 2: --cuda-graph-max-bs-decode" in said and "back on its last good unit" in said
        assert app.host is not None
        assert await app.host.read_unit() == good and (await app.host.status()).is_running


async def test_no_leaves_the_host_on_the_rollback(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        good = await push_failing(pilot, app, {"mem-fraction-static": "0.9", "sim-fail": "cuda-graph-oom"})
        trials = len(app.session.trials)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is app.main, "the question closed")
        await pilot.pause(0.5)
        assert len(app.session.trials) == trials and not any("Recover" in n for n in notes)
        assert app.host is not None and await app.host.read_unit() == good


async def test_a_failed_restart_is_offered_too_and_ends_back_on_the_sessions_last_good_unit(tmp_path: Path) -> None:
    """The unit on the host changed outside the panel into one that fails at graph capture, then r: the question
    names the rung; yes tries two rungs (neither fixes a forced capture failure) and puts the host back on the
    session's newest unit that came up."""
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        assert app.link is not None and app.host is not None and app.config_pane.running_text
        good = UnitFile.parse(app.config_pane.running_text).set_flags({"speculative-num-steps": "2",
                                                                       "speculative-num-draft-tokens": "3"}).text
        notes.clear()
        app.link.push(good)
        await wait_for(pilot, lambda: any(n.startswith("Server is healthy") for n in notes), "the good push",
                       steps=2400)
        await wait_for(pilot, lambda: app.session.trials and app.session.trials[-1].status == "ok"
                       or app.busy.name == "IDLE", "the trial's end")
        good = await app.host.read_unit()
        await app.host.push(UnitFile.parse(good).set_flags({"mem-fraction-static": "0.9",
                                                            "sim-fail": "cuda-graph-oom"}).text)
        app.link.restart()
        await wait_for(pilot, lambda: "next rung" in question_of(app), "the recovery question", steps=2400)
        assert "Capture cuda graph failed" in question_of(app) and "goes back on the last good unit" in question_of(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n.startswith("Not recovered after 2 restart(s)") for n in notes),
                       "the recovery's end", steps=3600)
        assert any("back on its last good unit" in n for n in notes if n.startswith("Not recovered"))
        assert await app.host.read_unit() == good and (await app.host.status()).is_running
