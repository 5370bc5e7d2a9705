"""The doctor's live watch (the panel's) and the fleet read /metrics too, not only the journal: a server at
`--log-level warning` logs no decode line, yet requests queued behind a full batch show in its gauges, so the
Doctor section and the Fleet row say capacity-bound while the queue lasts (real demo hosts, real HTTP)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from specdec_tui.core.config import BenchProfile, Config, HostConfig
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.fleet import FleetPoller
from specdec_tui.ui.app import make_app

from .ui_helpers import demo_ready, record_notifications, wait_for

pytestmark = pytest.mark.timeout(180)
QUIET = {"log-level": "warning", "enable-metrics": None, "max-running-requests": "2"}


def quiet_demo(root: Path, name: str) -> tuple[Path, str]:
    """A demo workspace (5× fast: a queue that lasts a few seconds) whose unit logs no decode lines and serves
    /metrics, with two running requests at most; returns its root and base URL."""
    ws = ensure_demo_workspace(root / name, time_scale=5)
    ws.unit_path.write_text(UnitFile.parse(ws.unit_path.read_text()).set_flags(QUIET).text)
    return ws.root, ws.base_url


async def queue(base_url: str, streams: int = 8) -> None:
    """Requests queued behind the two running ones for several seconds (several reads of the gauges)."""
    async def one(session: aiohttp.ClientSession) -> None:
        body = {"prompt": "Tell me about Lisbon.", "max_tokens": 800, "temperature": 0, "ignore_eos": True}
        async with session.post(base_url + "/v1/completions", json=body) as resp:
            await resp.read()

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(one(session) for _ in range(streams)))


async def test_the_fleet_row_names_a_queue_only_the_gauges_show(tmp_path: Path) -> None:
    root, base_url = quiet_demo(tmp_path, "q")
    config = Config(hosts={"q": HostConfig(name="q", address="local", workspace=str(root))})
    poller = FleetPoller(config)
    host = poller._open(config, "q")
    try:
        await host.restart()

        async def row_until(test) -> tuple[str, ...]:
            while True:
                row = next(r for r in await poller.poll() if r.name == "q")
                if test(row):
                    return row.findings
                await asyncio.sleep(0.1)

        assert await asyncio.wait_for(row_until(lambda r: r.state == "ready"), 60) == ()
        load = asyncio.create_task(queue(base_url))
        found = await asyncio.wait_for(row_until(lambda r: r.findings or load.done()), 60)
        assert found == ("capacity_bound",)
        await load
        assert await asyncio.wait_for(row_until(lambda r: not r.findings), 30) == ()  # cleared with the queue
    finally:
        await host.stop()
        await host.close()


async def test_the_panels_doctor_section_names_a_queue_only_the_gauges_show(tmp_path: Path) -> None:
    root, base_url = quiet_demo(tmp_path, "p")
    profile = BenchProfile(concurrency=(1,), requests=2, warmup=0, max_tokens=16)
    unit = "sglang-demo.service"
    config = Config(hosts={"p": HostConfig(name="p", address="local", workspace=str(root), unit=unit)},
                    profiles={"default": profile}, default_host="p")
    host = LocalHost(root, unit, base_url, name="p")
    app = make_app(config, host, Session(host="p", unit=unit), session_path=tmp_path / "p.toml")
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await demo_ready(pilot, notes)
        section = app.main.doctor_section
        assert "capacity_bound" not in section.plain
        load = asyncio.create_task(queue(base_url))
        await wait_for(pilot, lambda: "capacity_bound" in section.plain or load.done(), "the finding", steps=1200)
        assert "capacity_bound" in section.plain and "(from /metrics)" in section.plain, section.plain
        await load
        await wait_for(pilot, lambda: "capacity_bound" not in section.plain, "the finding cleared", steps=1200)
