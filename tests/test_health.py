"""Health: state derivation rules, and the watcher against a real HTTP server that comes up late."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from aiohttp import web

from specdec_tui.hosts.base import ServiceStatus
from specdec_tui.loop.health import HealthState, NotHealthy, derive_state, wait_ready, watch_health
from specdec_tui.loop.health_probe import HttpProbe, dead_subprocess_from, facts_from


def status(active: str, sub: str = "", code: int | None = None, result: str = "") -> ServiceStatus:
    return ServiceStatus(unit="sglang.service", active_state=active, sub_state=sub, exec_main_status=code, result=result)


READY_PROBE = HttpProbe(reachable=True, health_status=200, models=("qwen",))
REFUSED = HttpProbe(reachable=False, error="connection refused")


@pytest.mark.parametrize(
    "svc, probe, expected",
    [
        (status("failed", "failed", 1, "exit-code"), REFUSED, HealthState.FAILING),
        (status("inactive", "dead"), REFUSED, HealthState.DOWN),
        (status("activating", "start"), REFUSED, HealthState.STARTING),
        (status("active", "running"), REFUSED, HealthState.LOADING),
        (status("active", "running"), READY_PROBE, HealthState.READY),
        (status("active", "running"), HttpProbe(reachable=True, health_status=200), HealthState.LOADING),
        (None, READY_PROBE, HealthState.READY),
        (None, REFUSED, HealthState.DOWN),
        (None, HttpProbe(reachable=True, health_status=503), HealthState.WARMING_UP),
        (status("active", "running"), HttpProbe(reachable=True, health_status=503), HealthState.WARMING_UP),
        (None, HttpProbe(reachable=True, health_status=500), HealthState.FAILING),
        (status("active", "running"), HttpProbe(reachable=True, health_status=503, dead_subprocess="scheduler (pid 7) is dead"),
         HealthState.FAILING),
    ],
)
def test_state_derivation(svc: ServiceStatus | None, probe: HttpProbe, expected: HealthState) -> None:
    state, detail = derive_state(svc, probe)
    assert state is expected
    assert detail


def test_a_503_after_serving_is_not_warmup() -> None:
    state, detail = derive_state(status("active", "running"), HttpProbe(reachable=True, health_status=503), was_ready=True)
    assert state is HealthState.FAILING and "shutting down" in detail


@pytest.mark.parametrize(
    "exit_code, words",
    [(1, "scheduler_0 (pid 4242) exited with code 1"), (-9, "scheduler_0 (pid 4242) was killed by signal 9"),
     (None, "scheduler_0 (pid 4242) is dead")],
)
def test_the_dead_subprocess_503_body_is_read_in_words(exit_code: int | None, words: str) -> None:
    # upstream: python/sglang/srt/entrypoints/http_server.py _make_health_error_json
    body = json.dumps({"error": "subprocess not alive", "component": "scheduler_0", "pid": 4242, "exit_code": exit_code})
    assert dead_subprocess_from(body.encode()) == words
    assert dead_subprocess_from(b"") == "" and dead_subprocess_from(b"not json") == ""


def test_failed_unit_detail_names_exit_status() -> None:
    _, detail = derive_state(status("failed", "failed", 1, "exit-code"), REFUSED)
    assert "exit status 1" in detail and "exit-code" in detail


def test_facts_from_sglang_server_info() -> None:
    info = {
        "model_path": "Qwen/Qwen3.5-122B-A10B",
        "max_total_num_tokens": 91234,
        "speculative_algorithm": "EAGLE",
        "speculative_num_steps": 3,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4,
        "version": "0.5.6",
        "internal_states": [{"effective_max_running_requests_per_dp": 17, "avg_spec_accept_length": 3.2}],
    }
    facts = facts_from(info, ("qwen",), 262144)
    assert facts is not None
    assert facts.model == "qwen"
    assert facts.max_running_requests == 17
    assert facts.max_total_num_tokens == 91234
    assert facts.context_len == 262144
    assert facts.speculative == {"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LateServer:
    """A real HTTP server on loopback whose port opens only when told, like SGLang after loading."""

    def __init__(self) -> None:
        self.port = free_port()
        self.health_status = 200
        self.runner: web.AppRunner | None = None

    async def open(self) -> None:
        app = web.Application()
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/get_server_info", self._info)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(status=self.health_status)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "qwen", "max_model_len": 4096}]})

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response({"max_total_num_tokens": 1000,
                                  "internal_states": [{"effective_max_running_requests_per_dp": 21}]})

    async def close(self) -> None:
        if self.runner:
            await self.runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def test_watcher_sees_down_then_ready_with_facts() -> None:
    server = LateServer()
    seen: list[HealthState] = []
    try:
        async for snap in watch_health(None, server.url, fast_interval=0.01):
            seen.append(snap.state)
            if snap.state is HealthState.DOWN and server.runner is None:
                await server.open()
            if snap.state is HealthState.READY:
                assert snap.facts is not None and snap.facts.max_running_requests == 21
                assert snap.model == "qwen"
                break
    finally:
        await server.close()
    assert seen[0] is HealthState.DOWN and seen[-1] is HealthState.READY


async def test_wait_ready_times_out_with_the_last_state() -> None:
    server = LateServer()
    server.health_status = 503
    await server.open()
    try:
        with pytest.raises(NotHealthy, match="did not become ready within"):
            await wait_ready(None, server.url, timeout_s=0.5)
    finally:
        await server.close()


class FailedHost:
    """A host whose unit has failed: wait_ready must give up at once, not wait for the timeout."""

    async def status(self) -> ServiceStatus:
        return status("failed", "failed", 1, "exit-code")


async def test_wait_ready_stops_on_a_failed_unit() -> None:
    with pytest.raises(NotHealthy, match="failed while starting") as info:
        await asyncio.wait_for(wait_ready(FailedHost(), f"http://127.0.0.1:{free_port()}", timeout_s=60), 10)  # type: ignore[arg-type]
    assert info.value.snapshot is not None and info.value.snapshot.state is HealthState.FAILING


def test_facts_show_no_list_table_or_true_a_server_wrote_where_sglang_writes_text_or_a_number() -> None:
    """A /server_info (or whatever answers on the port) with the wrong types was shown as Python's repr of them:
    "speculative EAGLE steps={'x': [1]} topk=True", a model "['a', 'b']"."""
    info = {
        "served_model_name": ["a", "b"], "model_path": "Qwen/Qwen3-8B", "version": {"v": 1},
        "speculative_algorithm": "EAGLE", "speculative_num_steps": {"x": [1]}, "speculative_eagle_topk": True,
        "speculative_num_draft_tokens": 4, "max_total_num_tokens": "lots", "context_length": [4096],
        "tp_size": [2], "dtype": "bfloat16", "attention_backend": None,
        "internal_states": [{"effective_max_running_requests_per_dp": True}], "max_running_requests": 9,
    }
    facts = facts_from(info, (), None)
    assert facts is not None
    assert facts.model == "Qwen/Qwen3-8B" and facts.version == ""
    assert facts.speculative == {"algorithm": "EAGLE", "num_draft_tokens": 4}
    assert facts.speculative_words == "EAGLE draft=4"
    assert facts.max_running_requests is None and facts.max_total_num_tokens is None and facts.context_len is None
    assert facts.setup == {"model_path": "Qwen/Qwen3-8B", "dtype": "bfloat16"}
    assert facts_from(None, ("",), None) is not None  # a model list of one blank id still says the server answered
