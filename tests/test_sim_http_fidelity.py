"""The simulator's HTTP side answers as current SGLang does, and the panel's health probe reads it as an operator
would: 503 while warming up (not "failing"), /server_info rather than the deprecated /get_server_info.

upstream: python/sglang/srt/entrypoints/http_server.py (health_generate, get_server_info, server_info),
python/sglang/srt/managers/scheduler_components/internal_state.py and memory_usage.py (internal_states[0]),
python/sglang/srt/model_executor/graph_memory_usage.py (the graph phases).
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp import web

from specdec_tui.loop.health import HealthState, watch_health
from specdec_tui.sim.args import parse_sim_args
from specdec_tui.sim.logs import SimLog
from specdec_tui.sim.server import ServerStatus, SimServer, warm_up
from specdec_tui.sim.startup import memory_plan
from tests.test_sim_support import free_port, seed_flags

# The exact line upstream's logger.warning writes on every call of the deprecated alias.
GET_SERVER_INFO_WARNING = ("Endpoint '/get_server_info' is deprecated and will be removed in a future version. "
                           "Please use '/server_info' instead.")
SHUTDOWN_LINE = "Health check request received during shutdown. Returning 503."
UPSTREAM_GRAPH_PHASES = {"prefill", "decode", "target_verify", "draft_prefill", "draft_decode", "draft_extend"}


@dataclass
class LiveSim:
    server: SimServer
    out: io.StringIO
    url: str

    def journal(self) -> str:
        return self.out.getvalue()


@pytest.fixture
async def live_sim() -> AsyncIterator[LiveSim]:
    """The simulator's app bound on loopback in this process, before its warmup (as right after uvicorn binds)."""
    a = parse_sim_args([*seed_flags(3), "--time-scale", "50", "--enable-metrics"])
    out = io.StringIO()
    server = SimServer(a, memory_plan(a), SimLog(a.server["tp_size"], out=out), startup_s=41.5)
    server.engine.start()
    runner = web.AppRunner(server.build_app(), access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield LiveSim(server, out, f"http://127.0.0.1:{port}")
    finally:
        await server.engine.stop()
        await runner.cleanup()


async def _status(session: aiohttp.ClientSession, url: str) -> tuple[int, bytes]:
    async with session.get(url) as resp:
        return resp.status, await resp.read()


async def test_health_is_503_until_warmup_ends_and_again_while_shutting_down(live_sim: LiveSim) -> None:
    async with aiohttp.ClientSession() as s:
        assert await _status(s, live_sim.url + "/health") == (503, b"")
        assert (await _status(s, live_sim.url + "/health_generate"))[0] == 503
        await warm_up(live_sim.server)
        assert (await _status(s, live_sim.url + "/health"))[0] == 200
        assert (await _status(s, live_sim.url + "/health_generate"))[0] == 200
        assert SHUTDOWN_LINE not in live_sim.journal()
        live_sim.server.status = ServerStatus.SHUTTING_DOWN
        assert await _status(s, live_sim.url + "/health") == (503, b"")
    assert SHUTDOWN_LINE in live_sim.journal()
    journal = live_sim.journal()
    assert journal.index('"GET /health HTTP/1.1" 503') < journal.index("The server is fired up and ready to roll!")


async def test_get_server_info_warns_on_every_call_and_server_info_does_not(live_sim: LiveSim) -> None:
    await warm_up(live_sim.server)
    async with aiohttp.ClientSession() as s:
        async with s.get(live_sim.url + "/server_info") as resp:
            info = await resp.json()
        assert GET_SERVER_INFO_WARNING not in live_sim.journal()
        for _ in range(2):
            async with s.get(live_sim.url + "/get_server_info") as resp:
                assert resp.status == 200 and (await resp.json())["version"] == info["version"]
    assert live_sim.journal().count(GET_SERVER_INFO_WARNING) == 2
    state = info["internal_states"][0]
    assert state["effective_max_running_requests_per_dp"] == 17  # the seed's figure at steps 3
    # 0.5.23's build_scheduler_startup_time: four phases, the CUDA graphs' by graph phase (was {"scheduler_e2e": …})
    assert info["startup_time"] == state["startup_time"]
    assert set(info["startup_time"]) == {"load_weight", "kv_cache_allocation", "scheduler_e2e", "cuda_graph"}
    assert info["startup_time"]["scheduler_e2e"] == 41.5
    assert set(info["startup_time"]["cuda_graph"]) == UPSTREAM_GRAPH_PHASES
    assert (info["version"], info["frontend"], info["launch_command"]) == ("0.5.23", "python", "")
    memory = state["memory_usage"]
    assert set(memory["graph"]) == UPSTREAM_GRAPH_PHASES
    assert memory["graph"]["target_verify"] > 0 and memory["graph"]["decode"] == 0  # a spec server verifies
    assert sum(memory["graph"].values()) == pytest.approx(live_sim.server.plan.graph_gb, abs=0.002)
    assert memory["token_capacity"] == info["max_total_num_tokens"]


async def test_the_panels_probe_sees_warming_up_then_ready_and_never_calls_the_deprecated_route(live_sim: LiveSim) -> None:
    seen: list[HealthState] = []
    async for snap in watch_health(None, live_sim.url, fast_interval=0.01):
        seen.append(snap.state)
        if snap.state is HealthState.WARMING_UP and live_sim.server.status is ServerStatus.STARTING:
            assert "warming" in snap.detail or "warmup" in snap.detail
            await warm_up(live_sim.server)
        if snap.state is HealthState.READY:
            assert snap.facts is not None and snap.facts.max_running_requests == 17
            live_sim.server.status = ServerStatus.SHUTTING_DOWN  # a 503 after serving is no longer warmup
        if snap.state is HealthState.FAILING:
            break
    assert seen == [HealthState.WARMING_UP, HealthState.READY, HealthState.FAILING]
    journal = live_sim.journal()
    assert '"GET /server_info HTTP/1.1" 200' in journal
    assert "/get_server_info" not in journal
