"""Automatic recovery from a failed start on a real demo host: a fraction too small for the weights is raised to the
minimum the error names and the host comes up in one restart; a start that no rung fixes stops after two restarts
and the host is back on its last good unit, serving."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.recovery import recover_start, wait_settled

pytestmark = pytest.mark.timeout(240)


async def failing_host(root: Path, flags: dict[str, str | None]) -> tuple[LocalHost, str]:
    ws = ensure_demo_workspace(root / "a", time_scale=200)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="a")
    await host.connect()
    good = await host.read_unit()
    await host.push(UnitFile.parse(good).set_flags(flags).text)
    await host.restart()
    assert not await wait_settled(host, 60)
    return host, good


async def test_a_fraction_below_the_weights_is_raised_to_the_named_minimum_and_comes_up(tmp_path: Path) -> None:
    host, good = await failing_host(tmp_path, {"model-path": "meta-llama/Llama-3.1-8B-Instruct", "tp": "1",
                                               "speculative-algorithm": "EAGLE3", "mem-fraction-static": "0.1"})
    try:
        result = await recover_start(host, last_good=good, timeout_s=60)
        assert result.recovered and result.restarts == 1 and not result.back_on_good
        [step] = result.steps
        assert "Loaded weights leave no GPU memory" in step.cause and step.came_up
        assert UnitFile.parse(await host.read_unit()).get_flag("mem-fraction-static") == step.fix["mem-fraction-static"]
    finally:
        await host.stop()
        await host.close()


async def test_a_start_no_rung_fixes_stops_after_two_restarts_back_on_the_good_unit(tmp_path: Path) -> None:
    host, good = await failing_host(tmp_path, {"mem-fraction-static": "0.9", "sim-fail": "cuda-graph-oom"})
    try:
        result = await recover_start(host, last_good=good, timeout_s=60)
        assert not result.recovered and result.restarts == 2 and result.back_on_good
        assert [list(s.fix) for s in result.steps] == [["mem-fraction-static"], ["cuda-graph-max-bs-decode"]]
        assert await host.read_unit() == good and (await host.status()).is_running
    finally:
        await host.stop()
        await host.close()


def test_recover_does_nothing_to_a_start_that_did_not_fail(tmp_path: Path) -> None:
    async def run() -> None:
        ws = ensure_demo_workspace(tmp_path / "b", time_scale=200)
        host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="b")
        await host.connect()
        try:
            text = await host.read_unit()
            await host.restart()
            assert await wait_settled(host, 60)
            result = await recover_start(host, last_good=text, timeout_s=60)
            assert (result.recovered, result.restarts, result.note) == (False, 0, "the start did not fail")
            assert await host.read_unit() == text
        finally:
            await host.stop()
            await host.close()

    asyncio.run(run())
