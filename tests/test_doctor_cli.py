"""`specdec-tui doctor --host NAME [--since] [--json]` on a real demo host (local supervisor + simulator): the
interface scripts depend on (one JSON object with `findings`; exit 0 without, 3 with) and its window (the unit's
current start unless --since says otherwise)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.config import Config, HostConfig
from specdec_tui.hosts.factory import open_host
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

pytestmark = pytest.mark.timeout(180)


def doctor(config: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "doctor", "--config", str(config), "--host", "a",
                          *extra], capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "160"})
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, (json.loads(run.stdout) if "--json" in extra else {}), run.stdout


async def settle(host, *, up: bool) -> None:
    """Until the service is ready (its health answers) or has gone down after a failed start."""
    async def until() -> None:
        while True:
            status = await host.status()
            if not up and not status.is_running:
                return
            if up and status.is_running:
                async for entry in host.journal(follow=False, lines=400):
                    if "ready to roll" in entry.message and entry.timestamp >= status.active_enter:
                        return
            await asyncio.sleep(0.1)

    await asyncio.wait_for(until(), 60)


def test_doctor_json_names_a_failed_start_and_exits_3_and_a_good_start_clears_it(tmp_path: Path) -> None:
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=50)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.a]\naddress = "local"\nworkspace = "{ws.root}"\n')
    host = open_host(Config(hosts={"a": HostConfig(name="a", address="local", workspace=str(ws.root))}), "a",
                     keep_running=True)

    async def start(text: str | None, *, up: bool) -> str:
        await host.connect()
        good = await host.read_unit()
        if text is not None:
            await host.push(text)
        await host.restart()
        await settle(host, up=up)
        return good

    try:
        good = asyncio.run(start(None, up=True))
        code, out, _ = doctor(config, "--json")
        assert (code, out["findings"]) == (0, [])
        failing = good.replace("--port", "--mem-fraction-static 0.9 --sim-fail cuda-graph-oom --port", 1)
        asyncio.run(start(failing, up=False))
        code, out, _ = doctor(config, "--json")
        assert code == 3
        [finding] = out["findings"]
        assert finding["kind"] == "start_failure" and finding["severity"] == "critical" and finding["since"]
        assert "Capture cuda graph failed" in finding["evidence"][0]["line"] and finding["evidence"][0]["time"]
        assert finding["fix"]["set"] == {"--mem-fraction-static": "0.80"}
        code, _, text = doctor(config)
        assert code == 3 and "start_failure (critical)" in text and "fix: --mem-fraction-static 0.80" in text
        # recovery (opt-in): two rungs of the ladder fail too (the fault is forced), so it goes back to the unit
        # before, whose start is now the window: the failure before it is no finding ...
        # (opted in by the host's table here: auto_recover = true does what --recover does)
        config.write_text(config.read_text() + "auto_recover = true\n")
        recover = subprocess.run([sys.executable, "-m", "specdec_tui", "doctor", "--config", str(config), "--host",
                                  "a", "--json"], capture_output=True, text=True, timeout=120)
        assert recover.returncode == 0 and json.loads(recover.stdout)["findings"] == [], recover.stderr
        assert "recovery: step 1: lower --mem-fraction-static to 0.80" in recover.stderr
        assert "not recovered after 2 restart(s); back on the previous unit" in recover.stderr
        code, out, _ = doctor(config, "--json")
        assert (code, out["findings"]) == (0, [])
        # ... unless --since reaches back over it (the failed start is followed by a good one: cleared all the same)
        code, out, _ = doctor(config, "--json", "--since", "10m")
        assert (code, out["findings"]) == (0, [])
    finally:
        async def stop() -> None:
            await host.stop()
            await host.close()

        asyncio.run(stop())


def test_a_bad_since_is_said_in_words(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "doctor", "--host", "demo", "--since", "ten"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "'ten' is not a time span" in run.stderr and "Traceback" not in run.stderr


def test_a_since_longer_than_any_journal_is_said_in_words() -> None:
    """--since 99999999d went past datetime's year 1 and ended in an OverflowError traceback."""
    for span in ("99999999d", "9" * 400 + "s"):
        run = subprocess.run([sys.executable, "-m", "specdec_tui", "doctor", "--host", "demo", "--since", span],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and "at most 3650d" in run.stderr and "Traceback" not in run.stderr, run.stderr


async def test_without_decode_lines_the_doctor_reads_the_gauges(tmp_path: Path) -> None:
    """`--log-level warning` logs no decode line: requests queued behind a full batch are read from /metrics."""
    import aiohttp

    from specdec_tui.core.unit import UnitFile
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.loop.doctor import examine
    from specdec_tui.loop.recovery import wait_settled

    ws = ensure_demo_workspace(tmp_path / "m", time_scale=5)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="m")
    await host.connect()
    try:
        unit = UnitFile.parse(await host.read_unit())
        await host.push(unit.set_flags({"log-level": "warning", "enable-metrics": None, "max-running-requests": "2"}).text)
        await host.restart()
        assert await wait_settled(host, 60)
        assert (await examine(host, "m")).findings == []

        async def one(session: aiohttp.ClientSession) -> None:
            body = {"prompt": "Tell me about Lisbon.", "max_tokens": 400, "temperature": 0, "ignore_eos": True}
            async with session.post(ws.base_url + "/v1/completions", json=body) as resp:
                await resp.read()

        async with aiohttp.ClientSession() as session:
            load = asyncio.gather(*(one(session) for _ in range(6)))
            report = await examine(host, "m")
            while not report.findings and not load.done():
                report = await examine(host, "m")
            await load
        assert [f.kind.value for f in report.findings] == ["capacity_bound"], report.findings
        [finding] = report.findings
        assert "(from /metrics)" in finding.cost
        assert finding.evidence[0].figures["limit"] == 2 and finding.evidence[0].figures["queue"] > 0
    finally:
        await host.stop()
        await host.close()
