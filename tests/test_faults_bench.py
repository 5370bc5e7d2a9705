"""Faults during a benchmark, through the whole trial loop (push → restart → healthy → bench → record).

The server is a real process run by the demo host (`LocalHost`): either the simulated SGLang server,
killed mid-level by its PID, or one of the misbehaving test servers (stall, 5xx, garbage SSE, reset).
What the operator must get: the run ends within its timeouts, the errors are counted per level, and the
session file on disk holds the trial with those errors.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import AsyncIterator

import pytest
from specdec_tui.hosts.local.workspace import ensure_demo_workspace, free_port

from specdec_tui.bench.events import LevelProgress, LevelStarted
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, load_session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.state import read_state
from specdec_tui.loop.trial import Phase, TrialRunner

REPO = Path(__file__).resolve().parents[1]

# Serves one of tests/bench_servers.py's misbehaviours as a standalone process, plus /health.
FAULT_SERVER = """
import sys
sys.path.insert(0, sys.argv[3])
from aiohttp import web
from tests.bench_servers import ServerSpec, ServerStats, make_app

app = make_app(ServerSpec(mode=sys.argv[1], delay_s=0.002), ServerStats())

async def health(request):
    return web.Response(status=200)

app.router.add_get("/health", health)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), print=None, handle_signals=True)
"""

FAULT_PROFILE = BenchProfile(name="faults", concurrency=(1, 2), requests=3, max_tokens=24, temperature=0.0,
                             ignore_eos=True, prompts="repetitive", request_timeout_s=5, stall_timeout_s=0.5,
                             warmup=0)


def fault_unit(script: Path, mode: str, port: int) -> str:
    return (
        "[Unit]\nDescription=misbehaving test server\n\n[Service]\nType=simple\n"
        f"WorkingDirectory={REPO}\nExecStart={sys.executable} {script} {mode} {port} {REPO} --model-path test-model\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )


@pytest.fixture
async def fault_runner(tmp_path: Path) -> AsyncIterator[tuple[TrialRunner, Path, int]]:
    script = tmp_path / "fault_server.py"
    script.write_text(FAULT_SERVER)
    port = free_port()
    host = LocalHost(tmp_path / "ws", "faulty.service", f"http://127.0.0.1:{port}", stop_timeout_s=1)
    await host.connect()
    session = Session(host="faulty", unit="faulty.service", profile=FAULT_PROFILE)
    runner = TrialRunner(host=host, session=session, profile=FAULT_PROFILE, base_url=f"http://127.0.0.1:{port}",
                         session_path=tmp_path / "session.toml", healthy_timeout_s=30, auto_rollback=False)
    try:
        yield runner, script, port
    finally:
        await host.close()


# What each misbehaviour must be classified as (the words the bench table shows per level).
EXPECTED_KIND = {"http500": "http_500", "garbage": "bad_json", "stall": "stall", "reset": None,
                 "event_error": "stream_error"}


@pytest.mark.parametrize("mode", sorted(EXPECTED_KIND))
async def test_a_misbehaving_server_ends_the_trial_with_errors_counted_per_level(fault_runner, mode: str) -> None:
    runner, script, port = fault_runner
    phases: list[str] = []
    trial = await runner.run_trial(fault_unit(script, mode, port),
                                   on_event=lambda e: phases.append(e.name) if isinstance(e, Phase) else None)

    assert phases[-1] == "done" and "bench" in phases
    assert [lv.concurrency for lv in trial.levels] == [1, 2]
    for level in trial.levels:
        assert level.errors == level.requests >= 2, (mode, level)  # every measured request failed, and was counted
        assert sum(level.error_kinds.values()) == level.errors
        if EXPECTED_KIND[mode] is not None:
            assert set(level.error_kinds) == {EXPECTED_KIND[mode]}, level.error_kinds
    # The errors are in the session file, not only in memory.
    saved = load_session(runner.session_path).trial(trial.id)
    assert saved is not None
    assert [lv.errors for lv in saved.levels] == [lv.errors for lv in trial.levels]
    assert saved.errors == trial.errors > 0
    assert saved.levels[0].error_kinds == trial.levels[0].error_kinds


# ---------------------------------------------------------------------------------------------------- the sim


CRASH_PROFILE = BenchProfile(name="crash", concurrency=(1, 4, 8), requests=40, max_tokens=64, temperature=0.0,
                             ignore_eos=True, prompts="repetitive", request_timeout_s=5, stall_timeout_s=2,
                             warmup=0)


async def test_the_server_killed_mid_level_ends_the_run_and_the_trial_is_saved_with_errors(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=25)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    runner = TrialRunner(host=host, session=Session(host="demo", unit=ws.unit_name, profile=CRASH_PROFILE),
                         profile=CRASH_PROFILE, base_url=ws.base_url, session_path=tmp_path / "s.toml",
                         healthy_timeout_s=60, auto_rollback=False)
    killed: list[int] = []
    started: list[int] = []

    def on_event(event: object) -> None:
        if isinstance(event, LevelStarted):
            started.append(event.concurrency)
        # Kill the server's process (by its PID) once the second level has measured something.
        if isinstance(event, LevelProgress) and event.concurrency == 4 and event.done >= 2 and not killed:
            state = read_state(host.state_file)  # the main PID the local supervisor recorded
            pid = state.main_pid if state else None
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    try:
        trial = await runner.run_trial(await runner.read_running(), on_event=on_event)
        status = await host.status()
    finally:
        await host.close()

    assert killed, "the level ended before the kill point"
    assert started == [1, 4, 8]  # the run went on to the end and did not hang
    first, second, third = trial.levels
    assert first.errors == 0 and first.output_tok_s > 0
    assert 0 < second.errors < second.requests  # some finished before the kill, the rest failed
    assert third.errors == third.requests  # nobody answers any more
    assert status.active_state == "failed" and status.result == "signal"
    assert trial.status == "failed" and "stopped during the benchmark" in trial.failure  # not an "ok" trial
    saved = load_session(tmp_path / "s.toml").trial(trial.id)
    assert saved is not None and saved.status == "failed"
    assert [lv.errors for lv in saved.levels] == [0, second.errors, third.requests]
