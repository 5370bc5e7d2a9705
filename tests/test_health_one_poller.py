"""One health poller per host (issue 17, point 4): the panel's watch and a restart's wait share one watch, and a
ready server is asked for /v1/models only when /health changes — each probe is an access line in its journal."""

from __future__ import annotations

import asyncio
from collections import Counter

from aiohttp import web

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.loop.health import HealthState, HealthWatch, watch_health
from specdec_tui.loop.trial import TrialLoop
from tests.test_health import LateServer


class CountingServer(LateServer):
    """LateServer that counts the requests per path and notes which connection (peer port) asked /health."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: Counter[str] = Counter()
        self.health_peers: set[int] = set()

    async def _health(self, request: web.Request) -> web.Response:
        self.asked["/health"] += 1
        peer = request.transport.get_extra_info("peername") if request.transport else None
        if peer:
            self.health_peers.add(int(peer[1]))
        return await super()._health(request)

    async def _models(self, request: web.Request) -> web.Response:
        self.asked["/v1/models"] += 1
        return await super()._models(request)


async def test_a_restart_wait_reads_the_panels_watch_not_a_second_poller() -> None:
    server = CountingServer()
    await server.open()
    loop = TrialLoop(host=None, session=Session(host="t"), profile=BenchProfile(), base_url=server.url)  # type: ignore[arg-type]
    ready = asyncio.Event()

    async def panel() -> None:
        async for snap in loop.watch_health():
            if snap.state is HealthState.READY:
                ready.set()

    watcher = asyncio.create_task(panel())
    try:
        await asyncio.wait_for(ready.wait(), 10)
        snap = await asyncio.wait_for(loop.wait_healthy(10), 15)  # what a restart does after systemd's restart
        assert snap.state is HealthState.READY and snap.model == "qwen"
        # one poller: every /health came over the panel watch's one connection
        assert len(server.health_peers) == 1, f"/health from {len(server.health_peers)} connections"
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await server.close()


async def test_a_ready_server_is_asked_for_models_once_while_health_stays_200() -> None:
    server = CountingServer()
    await server.open()

    async def watch() -> None:
        async for _snap in watch_health(None, server.url, slow_interval=0.01):
            pass

    watcher = asyncio.create_task(watch())
    try:
        async with asyncio.timeout(20):
            while server.asked["/health"] < 20:  # twenty probes of a ready server
                await asyncio.sleep(0.01)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await server.close()
    assert server.asked["/v1/models"] == 1, server.asked


async def test_a_wait_probes_at_once_and_fast_though_the_watch_idles_slowly() -> None:
    """Idle, the watch polls slowly (an hour here); a restart's wait wakes it and polls fast until READY."""
    server = CountingServer()
    server.health_status = 503
    await server.open()
    watch = HealthWatch(None, server.url, fast_interval=0.01, idle_interval=3600, slow_interval=3600)
    first = asyncio.Event()

    async def panel() -> None:
        async for _snap in watch.changes():
            first.set()

    reader = asyncio.create_task(panel())
    try:
        await asyncio.wait_for(first.wait(), 10)
        assert watch.latest is not None and watch.latest.state is HealthState.WARMING_UP
        waiting = asyncio.create_task(watch.wait_ready(30))
        async with asyncio.timeout(10):
            while server.asked["/health"] < 3:  # the wait polls fast though the watch idles for an hour
                await asyncio.sleep(0.01)
        server.health_status = 200
        snap = await asyncio.wait_for(waiting, 10)
        assert snap.state is HealthState.READY
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await server.close()
