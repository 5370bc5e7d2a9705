"""A cancelled sweep's (or replay's) screen says how it ended: the value it was benchmarking read "bench c=1 5/8" for good and the
status line "restore: … restoring the unit that ran before" after the unit was back (tmux at 80×24: S, escape).
The value cut short says "cancelled", the values not reached "skipped", the status line that it is over."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.replay_screen import ReplayScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

from .ui_helpers import demo_idle, wait_for

pytestmark = pytest.mark.timeout(120)


async def test_escape_mid_value_marks_that_value_cancelled_the_rest_skipped_and_the_status_line_over(
        tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=2.0)  # slow enough to cancel within a level
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=6, warmup=0, max_tokens=64, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_idle(pilot)
        screen = SweepScreen(app.trial_loop, plan_from_form(SweepForm("speculative-num-steps", "2..3", "1", "c1"),
                                                           profile))
        app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.query("#sweep-values-table"))
                       and "c=1" in screen.cell_text("2", "status"), "the first value's bench", steps=2400)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, "the cancel to end", steps=2400)
        await pilot.pause()
        assert screen.cell_text("2", "status") == "cancelled"
        assert screen.cell_text("3", "status") == "skipped"
        status = str(screen.query_one("#sweep-status").render())
        assert "restoring" not in status and "cancelled" in status, status


async def test_escape_mid_replay_marks_that_trial_cancelled_and_the_rest_skipped(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=2.0)
    base = demo_config(ws)
    profile = BenchProfile(name="demo", concurrency=(1,), requests=6, warmup=0, max_tokens=64, ignore_eos=True)
    config = Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host)
    unit = ws.unit_path.read_text()
    trials = [Trial(id=i, unit_text=unit, status="ok", label=f"run {i}", profile=profile,
                    levels=[LevelResult(concurrency=1, requests=6, output_tok_s=100.0)]) for i in (1, 2)]
    session = Session(host="demo", unit=ws.unit_name, profile=profile, trials=trials)
    app = make_app(config, LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"), session,
                   session_path=tmp_path / "s.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await demo_idle(pilot)
        screen = ReplayScreen(app.trial_loop, session)
        app.push_screen(screen)
        await wait_for(pilot, lambda: bool(screen.query("#replay-table")) and screen.cell_text(1, "status") != "pending",
                       "the first trial's replay", steps=2400)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, "the cancel to end", steps=2400)
        await pilot.pause()
        assert screen.cell_text(1, "status") == "cancelled"
        assert screen.cell_text(2, "status") == "skipped"
