"""A rollback after a sweep, tune or replay undoes what the operator did, not a value the task tried: each value
was a push that kept the unit before it as a backup, so once the task put the unit back the newest backup was
its last value — `host rollback` after an interrupted CLI sweep restored the sweep's `steps=2` instead of the
unit before the operator's own push (last stop's newcomer pass). Real demo hosts, real signals, the real CLI."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.paths import demo_dir
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.sweep import run_sweep
from specdec_tui.loop.sweep_plan import SweepPlan
from specdec_tui.loop.trial import TrialLoop

from .test_signals_headless import start, wait_for_line

pytestmark = pytest.mark.timeout(300)
STEPS = "speculative-num-steps"


def with_flags(text: str, **flags: str) -> str:
    return UnitFile.parse(text).set_flags({k.replace("_", "-"): v for k, v in flags.items()}).text


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True, timeout=120)


def test_host_rollback_after_an_interrupted_cli_sweep_restores_the_unit_before_the_operator_s_push() -> None:
    ws = ensure_demo_workspace(demo_dir(), time_scale=25)
    unit_file = Path(ws.root) / "units" / ws.unit_name
    first = unit_file.read_text()
    mine = with_flags(first, mem_fraction_static="0.86")  # the operator's own change, pushed before the sweep
    asyncio.run(LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo").push(mine))
    try:
        sweep = start("sweep", "--host", "demo", "--values", "2,3", "--repeats", "1", "--concurrency", "1,2",
                      "--requests", "200", "--max-tokens", "256")
        wait_for_line(sweep, "waiting for /health")  # the first value is pushed and its server starting
        assert unit_file.read_text() != mine
        os.kill(sweep.pid, signal.SIGINT)
        _, err = sweep.communicate(timeout=120)
        assert sweep.returncode != 0 and "Traceback" not in err, err
        assert unit_file.read_text() == mine  # the sweep put the operator's unit back
        done = cli("host", "rollback", "--host", "demo", "--no-restart")
        assert done.returncode == 0, done.stderr
        assert unit_file.read_text() == first, done.stdout  # not the sweep's steps=2
        assert "mem-fraction-static" in done.stdout and "speculative-num-steps" not in done.stdout, done.stdout
    finally:
        cli("host", "stop", "--host", "demo")


async def test_a_finished_sweep_leaves_the_history_as_it_found_it_or_one_backup_behind_its_winner(
        demo_runner: TrialLoop) -> None:
    host = demo_runner.host
    first = await demo_runner.read_running()
    await host.push(with_flags(first, mem_fraction_static="0.86"))
    mine = await host.read_unit()
    history = await host.history()
    plan = SweepPlan(STEPS, ("2", "4"), repeats=1, stop_after_worse=False)
    outcome = await run_sweep(demo_runner, mine, plan)
    assert outcome.left_on == "original" and await host.history() == history  # back as it was: rollback → first
    outcome = await run_sweep(demo_runner, mine, SweepPlan(STEPS, ("2", "4"), repeats=1, stop_after_worse=False,
                                                          apply_best=True))
    assert outcome.left_on == "winner"
    (kept,) = [n for n in await host.history() if n not in history]
    assert await host.read_backup(kept) == mine  # a rollback from the winner undoes the sweep as a whole
    assert await host.rollback() == mine
    assert await host.rollback() == first
