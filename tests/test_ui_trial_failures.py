"""A benchmark that ends in error, or a server that dies under it, fails the trial — in the panel exactly as
in the headless commands (both drive `loop.trial.TrialLoop`). Before the loop owned the trial, the panel
left such a trial `running` with no failure recorded."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, load_session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.state import read_state
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.states import Busy
from specdec_tui.loop.trial import TrialLoop

from .ui_helpers import demo_app, record_notifications, wait_for

NO_PROMPTS = BenchProfile(concurrency=(1,), requests=2, warmup=0, max_tokens=16, prompts="/nonexistent/prompts.json")
# long enough that the server can be killed while the second level runs
LONG = BenchProfile(concurrency=(1, 4), requests=400, warmup=0, max_tokens=128)


def _ready(app) -> bool:
    return (app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE and app.busy is Busy.IDLE
            and app.health is not None and app.health.state == "ready")


async def test_panel_bench_that_ends_in_error_fails_the_trial_with_the_reason(tmp_path: Path) -> None:
    session_file = tmp_path / "session.toml"
    app = demo_app(tmp_path, session_path=session_file)
    app.config = replace(app.config, profiles={"default": NO_PROMPTS})
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: _ready(app), "the demo to be ready", steps=1200)
        await pilot.press("b")
        await wait_for(pilot, lambda: bool(app.session.trials) and app.session.trials[-1].status != "running"
                       and app.busy is Busy.IDLE, "the benchmark to end", steps=1200)
        trial = app.session.trials[-1]
        assert trial.status == "failed"
        assert "benchmark:" in trial.failure and "/nonexistent/prompts.json" in trial.failure
        assert any("/nonexistent/prompts.json" in n for n in seen)  # said in words
        assert app.screen.query_one("#trials-list").cell_text(trial.id, "status").startswith("failed: benchmark:")
    saved = load_session(session_file).trial(trial.id)
    assert saved is not None and saved.status == "failed" and saved.failure == trial.failure


async def test_panel_bench_whose_server_dies_fails_the_trial(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=25)
    app.config = replace(app.config, profiles={"default": LONG})
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: _ready(app), "the demo to be ready", steps=1200)
        await pilot.press("b")
        table = app.screen.query_one("#bench-table")
        await wait_for(pilot, lambda: table.status.startswith("Level c=1"), "the first level to run", steps=1200)
        state = read_state(app.host.state_file)
        assert state is not None and state.main_pid is not None
        os.kill(state.main_pid, signal.SIGKILL)
        await wait_for(pilot, lambda: app.session.trials[-1].status != "running" and app.busy is Busy.IDLE,
                       "the benchmark to end", steps=2400)
        trial = app.session.trials[-1]
        assert trial.status == "failed", trial.status
        assert "the server stopped during the benchmark" in trial.failure


async def test_headless_bench_that_ends_in_error_fails_the_trial(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    loop = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=NO_PROMPTS),
                     profile=NO_PROMPTS, base_url=ws.base_url, session_path=tmp_path / "s.toml", healthy_timeout_s=60)
    try:
        trial = await loop.run_trial(await loop.read_running())
    finally:
        await host.close()
    assert trial.status == "failed" and "/nonexistent/prompts.json" in trial.failure
    assert loop.busy is Busy.IDLE and loop.trial is None
