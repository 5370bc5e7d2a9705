"""The service fails to start: detected from systemd's state plus the journal's error line, the failure
text carries SGLang's own words, and auto-rollback brings the previous unit back, healthy.

On the demo host (the simulated SGLang process under `LocalHost`) and on the real systemd lab over SSH.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.events import Phase
from specdec_tui.loop.health import HealthState, probe_once
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError

PROFILE = BenchProfile(name="t", concurrency=(1,), requests=2, max_tokens=16, prompts="repetitive", warmup=0)

# flag edit → words of SGLang's error line that the failure must quote. (An unknown flag no longer gets that far:
# the panel judges the unit by the release's own parser and refuses the push, as SGLang 0.5.23 would refuse to start.)
BAD_STARTS = {
    # 0.672: room for the weights (0.5.23's minimum viable fraction is 0.668 here), none left for KV beside the
    # state pool. At 0.5 the weights themselves do not fit and 0.5.23 says "Loaded weights leave no GPU memory".
    "kv-oom": ({"mem-fraction-static": "0.672"}, "Not enough memory"),
    "cuda-graph-oom": ({"sim-fail": "cuda-graph-oom"}, "CUDA out of memory"),
}


def edit(text: str, flags: dict[str, str]) -> str:
    return UnitFile.parse(text).set_flags(flags).text


async def assert_healthy(runner: TrialLoop) -> None:
    async with httpx.AsyncClient(timeout=5) as client:
        snap = await probe_once(runner.host, client, runner.base_url)
    assert snap.state is HealthState.READY, snap.detail


async def check_failed_start_rolls_back(runner: TrialLoop, case: str, base: dict[str, str] | None = None) -> None:
    good = edit(await runner.read_running(), base or {})
    if base:  # the edit differs from what is on the host: pushing it leaves a backup to roll back to
        await runner.push(good)
        await runner.restart()
        expected = [("failed", True)]
    else:  # a first trial on the same unit gives the history something to restore
        first = await runner.run_trial(good, run_bench=False)
        assert first.status == "ok", first.failure
        expected = [("ok", False), ("failed", True)]
    flags, words = BAD_STARTS[case]
    phases: list[str] = []
    trial = await runner.run_trial(edit(good, flags), run_bench=False,
                                   on_event=lambda e: phases.append(e.name) if isinstance(e, Phase) else None)

    assert phases == ["push", "restart", "wait", "rollback", "done"]
    assert trial.status == "failed"
    assert "failed while starting" in trial.failure  # systemd's verdict, not a timeout
    assert words in trial.failure, trial.failure  # the journal's own error line
    assert "healthy again" in trial.notes
    assert await runner.host.read_unit() == good  # byte-identical previous unit
    await assert_healthy(runner)
    saved = load_session(runner.session_path)
    assert [(t.status, words in t.failure) for t in saved.trials] == expected


# ------------------------------------------------------------------------------------------------ demo host


@pytest.fixture
async def start_runner(tmp_path: Path) -> AsyncIterator[TrialLoop]:
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=40)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    runner = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=PROFILE),
                         profile=PROFILE, base_url=ws.base_url, session_path=tmp_path / "s.toml",
                         healthy_timeout_s=60)
    try:
        yield runner
    finally:
        await host.close()


@pytest.mark.parametrize("case", ["cuda-graph-oom"])
async def test_demo_failed_start_is_named_and_rolled_back(start_runner: TrialLoop, case: str) -> None:
    await check_failed_start_rolls_back(start_runner, case)


async def test_an_unknown_flag_is_refused_before_the_push_in_argparses_words(start_runner: TrialLoop) -> None:
    good = await start_runner.read_running()
    with pytest.raises(WorkflowError, match="SGLang 0.5.23 refuses the command line \\(exit 2\\): unrecognized "
                       "arguments: --not-a-real-flag 1"):
        await start_runner.run_trial(edit(good, {"not-a-real-flag": "1"}), run_bench=False)
    assert await start_runner.host.read_unit() == good


async def test_demo_unknown_flag_exits_2_like_argparse(start_runner: TrialLoop) -> None:
    # pushed past the panel's check (straight to the host): the simulator stops as 0.5.23's parser does
    good = await start_runner.read_running()
    await start_runner.host.push(edit(good, {"not-a-real-flag": "1"}))
    await start_runner.host.restart()
    for _ in range(400):  # until the process has stopped (argparse runs before anything loads)
        status = await start_runner.host.status()
        if not status.is_running:
            break
        await asyncio.sleep(0.05)
    assert status.is_failed and status.exec_main_status == 2


# ------------------------------------------------------------------------------------------- the real lab


@pytest.fixture
async def lab_runner(make_ssh_host, lab_service, tmp_path: Path) -> TrialLoop:
    host = make_ssh_host()
    return TrialLoop(host=host, session=Session(host="lab", unit=lab_service.unit, profile=PROFILE),
                       profile=PROFILE, base_url=lab_service.base_url, session_path=tmp_path / "s.toml",
                       healthy_timeout_s=60)


@pytest.mark.parametrize("case", ["kv-oom"])
async def test_lab_failed_start_is_named_and_rolled_back_over_ssh(lab_runner: TrialLoop, case: str) -> None:
    # The unit as the panel would push it (the lab's already is: steps, topk 1, draft tokens steps+1).
    await check_failed_start_rolls_back(lab_runner, case, {"speculative-eagle-topk": "1",
                                                           "speculative-num-draft-tokens": "4"})
