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
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.loop.sweep_plan import OnHost, SweepPlan, SweepValueStarted
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen

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


async def test_applying_a_sweep_s_winner_holds_the_host_until_it_runs_it(tmp_path: Path) -> None:
    """"Apply the winner?" — yes: the winner is pushed and the host restarted after the sweep let go of the loop. The
    push went straight to the host, so in that moment the panel was idle and b started a benchmark on the unit being
    replaced. The host's first answer is held open here: the apply holds the host, b is refused in words, and the
    host is let go once it runs the winner."""
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot)
        loop = app.trial_loop
        assert loop is not None
        app.push_screen(SweepScreen(loop, plan_from_form(SweepForm(STEPS, "1,3", "1", "c1"), app.config.profile())))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-question")),
                       "the apply question", steps=2400)
        release, read_unit = asyncio.Event(), loop.host.read_unit

        async def slow_read() -> str:
            await release.wait()
            return await read_unit()

        loop.host.read_unit = slow_read  # type: ignore[method-assign]
        await pilot.press("y")
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        await wait_for(pilot, lambda: any("applying the winner" in line for line in screen.log_lines), "the apply")
        said = len(seen)
        await pilot.press("b")
        await wait_for(pilot, lambda: len(seen) > said or app.bench_running or "Wait for the sweep to finish before a benchmark." in seen,
                       "b answered")
        assert not app.bench_running, "a benchmark started while the winner was being applied"
        assert seen[said:] == ["Wait for the sweep to finish before a benchmark."], seen[said:]
        await pilot.press("escape")  # cut the apply half-way before, and the screen could not be closed after
        assert app.screen is screen and screen.log_lines[-1] == "applying the winner: wait until every host runs it…"
        release.set()
        await wait_for(pilot, lambda: "now runs the" in screen.applied, "the winner applied", steps=2400)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the host let go")
        assert loop.refusal(Busy.BENCH) is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SweepScreen), "the screen closed")


async def test_a_on_a_tune_across_two_hosts_holds_the_panel_s_host_until_the_other_runs_the_choice(
        tmp_path: Path) -> None:
    """`a` after a tune on demo and b: the choice goes onto b first, then the panel pushes its own host. Meanwhile the
    panel was idle — b started a benchmark on demo — and escape closed the screen, cutting b's push half-way. b's
    first answer is held open here: b is refused in words, escape waits and says so, and once b runs the choice the
    screen goes and the panel pushes its own host."""
    from dataclasses import replace

    from specdec_tui.hosts.local.workspace import demo_host_config
    from specdec_tui.loop.tune_space import unit_for
    from specdec_tui.ui.screens.tune_screen import TuneScreen

    from .ui_helpers import demo_ready, start_tune

    app = demo_app(tmp_path, session_path=tmp_path / "session.toml")
    other = ensure_demo_workspace(tmp_path / "b", time_scale=200.0)
    app.config = replace(app.config, hosts={**app.config.hosts, "b": replace(
        demo_host_config(other), name="b", address="local", workspace=str(other.root))})
    before = other.unit_path.read_text()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, seen)
        screen = await start_tune(pilot, app, "speculative-num-steps=0,3", "ttft_p99=5s", "4", hosts="demo, b")
        await wait_for(pilot, lambda: screen.outcome is not None or not screen.running, "the tune's end", steps=2400)
        assert screen.outcome is not None and screen.outcome.promoted is not None and screen.others is not None
        (b_loop,) = screen.others.loops
        release, read_unit = asyncio.Event(), b_loop.host.read_unit

        async def slow_read() -> str:
            await release.wait()
            return await read_unit()

        b_loop.host.read_unit = slow_read  # type: ignore[method-assign]
        await pilot.press("a")
        await wait_for(pilot, lambda: "pushing the choice on b too" in str(screen.query_one("#tune-status").render()),
                       "the push on b")
        said = len(seen)
        await pilot.press("b")
        await wait_for(pilot, lambda: len(seen) > said or app.bench_running, "b answered")
        assert not app.bench_running, "a benchmark started on demo while the choice was being pushed on b"
        assert seen[said:] == ["Wait for the tune to finish before a benchmark."], seen[said:]
        await pilot.press("escape")
        assert isinstance(app.screen, TuneScreen)
        assert "pushing the choice on b: wait until it runs there" in str(app.screen.query_one("#tune-status").render())
        release.set()
        await wait_for(pilot, lambda: not isinstance(app.screen, TuneScreen), "the choice on b", steps=2400)
        assert other.unit_path.read_text() == unit_for(before, dict(screen.outcome.promoted))


def test_another_command_s_sweep_or_rollback_on_a_held_host_is_refused_in_words_and_changes_nothing(tmp_path: Path) -> None:
    """Two processes on one host: while a tune here holds demo, `specdec-tui sweep --host demo` and `host rollback`
    in another process stop before they change anything, saying which task holds demo, where and how to stop it."""
    from specdec_tui.loop.host_hold import holding

    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.demo]\naddress = "local"\nworkspace = "{ws.root}"\n')
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    asyncio.run(host.push(ws.unit_path.read_text().replace("--speculative-num-steps 1", "--speculative-num-steps 2")))
    before = ws.unit_path.read_bytes()  # with a backup for `host rollback` to restore
    assert b"--speculative-num-steps 2" in before
    with holding(host.info, "tune"):
        done = subprocess.run([sys.executable, "-m", "specdec_tui", "sweep", "--config", str(config), "--host", "demo",
                               "--values", "1,2", "--repeats", "1"], capture_output=True, text=True, timeout=120)
        undo = subprocess.run([sys.executable, "-m", "specdec_tui", "host", "rollback", "--config", str(config),
                               "--host", "demo"], capture_output=True, text=True, timeout=120)
    for ran in (done, undo):
        assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
        assert f"demo is held by a tune of another specdec-tui (process {os.getpid()}" in ran.stderr, ran.stderr
    assert ws.unit_path.read_bytes() == before
