"""Every host a sweep or tune on several hosts uses is held for as long as the task runs: the task's own loop on each
host shows it busy, and any other loop on one of them — this panel's, another terminal's panel, a second
`specdec-tui sweep` — refuses what would change or load the host in words (which task, how to stop it), until the
task ends, fails or is cancelled. Real demo hosts (the simulated SGLang server on loopback), a real CLI process,
the panel through Pilot."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.busy import Refused
from specdec_tui.loop.host_hold import holder_of
from specdec_tui.loop.parallel_sweep import sweep_running_units
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_plan import OnHost, SweepPlan, SweepValueStarted
from specdec_tui.loop.trial import TrialLoop

from .ui_helpers import demo_app, demo_idle, record_notifications, wait_for

STEPS = "speculative-num-steps"
PROFILE = BenchProfile(name="t", concurrency=(1,), requests=4, max_tokens=32, temperature=0.5,
                       prompts="realistic", request_timeout_s=60, stall_timeout_s=30)


def loop_on(root: Path, name: str, session: Session, busy_seen: list[Busy] | None = None) -> TrialLoop:
    ws = ensure_demo_workspace(root / name, time_scale=25)
    loop = TrialLoop(host=LocalHost(ws.root, ws.unit_name, ws.base_url, name=name), session=session,
                     profile=PROFILE, base_url=ws.base_url, healthy_timeout_s=120)
    if busy_seen is not None:
        loop.sink = lambda event: busy_seen.append(event.busy) if hasattr(event, "busy") else None
    return loop


async def test_a_sweep_on_two_hosts_holds_the_second_host_for_every_other_loop_until_it_is_cancelled(
        tmp_path: Path) -> None:
    """As the panel runs it: the panel's loop claimed first (`SweepScreen`), the other host's loop a private one. The
    other host's loop is marked busy while the sweep drives it, and a second loop on that host (another panel,
    another terminal) refuses a benchmark, a push, a restart and a rollback, naming the sweep and how to stop it."""
    session = Session(host="a", unit="sglang-demo.service", profile=PROFILE)
    b_busy: list[Busy] = []
    panel_a, private_b = loop_on(tmp_path, "a", session), loop_on(tmp_path, "b", session, b_busy)
    another_b = loop_on(tmp_path, "b", Session(host="b", unit="sglang-demo.service", profile=PROFILE))
    on_b = asyncio.Event()

    def seen(event: object) -> None:
        inner = event.event if isinstance(event, OnHost) else event
        if isinstance(inner, SweepValueStarted) and inner.host == "b":
            on_b.set()

    async def sweep() -> None:
        with panel_a.task(Busy.SWEEP):
            await sweep_running_units([panel_a, private_b], SweepPlan(STEPS, ("2", "3", "4", "5"), repeats=1,
                                                                      stop_after_worse=False), on_event=seen)

    try:
        for loop in (panel_a, private_b, another_b):
            await loop.host.connect()
        await another_b.read_running()
        running = asyncio.create_task(sweep())
        await asyncio.wait_for(on_b.wait(), 60)
        assert private_b.busy is Busy.SWEEP and Busy.SWEEP in b_busy  # was idle: the task's flag let it through
        why = another_b.refusal(Busy.BENCH)
        assert why is not None and "b is held by the sweep running here" in why and "escape on its Sweep screen" in why
        for intent in (another_b.bench(), another_b.restart(), another_b.rollback(),
                       another_b.push_and_restart(another_b.running_text or "")):
            with pytest.raises(Refused, match="held by the sweep"):
                await intent
        assert another_b.busy is Busy.IDLE and not running.done()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert private_b.busy is Busy.IDLE and b_busy[-1] is Busy.IDLE
        assert another_b.refusal(Busy.BENCH) is None and holder_of(another_b.host.info) is None  # let go
    finally:
        for loop in (panel_a, private_b, another_b):
            await loop.host.close()


def _config(tmp_path: Path, demo_root: Path) -> Path:
    other = ensure_demo_workspace(tmp_path / "a", time_scale=200)  # as demo_app's: the same unit but for its port
    config = tmp_path / "config.toml"
    config.write_text('default_profile = "tiny"\n[profiles.tiny]\nconcurrency = [1]\nrequests = 200\n'
                      'max_tokens = 256\ntemperature = 0.5\nprompts = "realistic"\n'
                      f'[hosts.demo]\naddress = "local"\nworkspace = "{demo_root}"\n'
                      f'[hosts.a]\naddress = "local"\nworkspace = "{other.root}"\n')
    return config


async def test_the_panel_refuses_b_and_r_on_a_host_another_terminal_s_sweep_holds_until_it_ends(
        tmp_path: Path) -> None:
    """A `specdec-tui sweep --host a --host demo` in another process, the panel on demo: its keys that would change
    or load demo are refused in words naming the sweep, its process and how to stop it; once the sweep is stopped
    (Ctrl-C: it puts the units back and lets go) the panel's benchmark is no longer refused."""
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        assert app.trial_loop is not None
        sweep = subprocess.Popen(
            [sys.executable, "-m", "specdec_tui", "sweep", "--config", str(_config(tmp_path, tmp_path / "demo")),
             "--host", "a", "--host", "demo", "--values", "2..5", "--repeats", "1", "--no-early-stop"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            await wait_for(pilot, lambda: holder_of(app.trial_loop.host.info) is not None  # type: ignore[union-attr]
                           or sweep.poll() is not None, "the CLI sweep to hold demo", steps=1200)
            assert sweep.poll() is None, sweep.communicate()
            for key in ("b", "r"):
                before = len(seen)
                await pilot.press(key)
                await wait_for(pilot, lambda n=before: len(seen) > n, f"a word after {key}")
                said = " ".join(seen[before:])
                assert f"demo is held by a sweep of another specdec-tui (process {sweep.pid}" in said, said
                assert "Ctrl-C where the command runs" in said
            assert app.trial_loop.busy is Busy.IDLE and app.busy is Busy.IDLE  # nothing started under the sweep
        finally:
            if sweep.poll() is None:
                os.kill(sweep.pid, signal.SIGINT)
            await asyncio.to_thread(sweep.communicate, timeout=120)
        deadline = time.monotonic() + 30
        while holder_of(app.trial_loop.host.info) is not None and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert app.trial_loop.refusal(Busy.BENCH) is None  # let go when the sweep ended
        await wait_for(pilot, lambda: app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE, "idle", 1200)
        after = len(seen)
        trials = len(app.session.trials)
        await pilot.press("b")
        await wait_for(pilot, lambda: app.busy is Busy.BENCH or len(seen) > after, "the benchmark to start")
        assert not any("held" in n for n in seen[after:]), seen[after:]
        assert app.busy is Busy.BENCH or len(app.session.trials) > trials  # it ran (the demo server may be gone)
