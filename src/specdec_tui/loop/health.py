"""Is the server up? Readiness from systemd's state plus SGLang's HTTP endpoints.

SGLang binds its port only when the model is loaded, so "process alive, port refused" means loading; from bind
until its warmup request finishes `/health` answers 503 with no body ("warming up"). A 503 once it has served
means it is shutting down or unhealthy; a 503 whose JSON body names a dead subprocess is a failure.
(upstream: python/sglang/srt/entrypoints/http_server.py health_generate, _dead_subprocess_response)
The watcher polls fast while the server is not ready (detection within ~100 ms of /health turning 200)
and slowly once it is, and yields a snapshot only when something the operator sees has changed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from specdec_tui.core.results import ServerFacts
from specdec_tui.hosts.base import Host, HostError, ServiceStatus

if TYPE_CHECKING:  # httpx (with httpcore, its TLS setup and more) is loaded by the first probe, not the first frame
    import httpx


class HealthState(StrEnum):
    DOWN = "down"  # not running (inactive), or nothing answers and systemd is unknown
    STARTING = "starting"  # systemd is starting the unit
    LOADING = "loading"  # process alive, port not open yet (weights, KV cache, cuda graphs)
    WARMING_UP = "warming up"  # port open, /health 503 until the warmup request is done
    READY = "ready"  # /health 200 and /v1/models answers
    FAILING = "failing"  # unit failed, or the server answers with errors


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """What the HTTP endpoints said in one probe."""

    reachable: bool  # something accepted the TCP connection
    health_status: int | None = None
    models: tuple[str, ...] = ()
    max_model_len: int | None = None
    server_info: dict[str, Any] | None = None
    error: str = ""
    dead_subprocess: str = ""  # from a 503 body: "scheduler_0 (pid 4242) exited with code 1"


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    state: HealthState
    status: ServiceStatus | None
    http_ok: bool
    model: str = ""
    facts: ServerFacts | None = None
    detail: str = ""
    checked_at: float = 0.0  # time.monotonic() of the probe

    def same_view(self, other: HealthSnapshot | None) -> bool:
        """True when nothing the operator sees differs (ignores the probe time)."""
        return other is not None and replace(self, checked_at=0.0) == replace(other, checked_at=0.0)


def derive_state(status: ServiceStatus | None, probe: HttpProbe, *, was_ready: bool = False) -> tuple[HealthState, str]:
    """Combine systemd's view and the HTTP probe into one state and a line of explanation.

    `was_ready`: the server answered 200 since it last started, so a plain 503 is no longer its warmup."""
    if status is not None:
        if status.is_failed:
            code = f", exit status {status.exec_main_status}" if status.exec_main_status not in (None, 0) else ""
            return HealthState.FAILING, f"unit failed ({status.result or status.sub_state}{code})"
        if status.active_state in ("inactive", "deactivating"):
            return HealthState.DOWN, f"unit {status.active_state}"
        if status.active_state == "activating":
            return HealthState.STARTING, f"systemd is starting the unit ({status.sub_state})"
    if probe.health_status == 200 and probe.models:
        return HealthState.READY, "serving"
    if probe.health_status == 200:
        return HealthState.LOADING, "/health is 200 but /v1/models does not answer yet"
    if probe.dead_subprocess:
        return HealthState.FAILING, f"/health 503: subprocess {probe.dead_subprocess}"
    if probe.health_status == 503 and not was_ready:
        return HealthState.WARMING_UP, "port open, /health 503 until the warmup request finishes"
    if probe.health_status == 503:
        return HealthState.FAILING, "/health 503 after serving: the server is shutting down or cannot generate"
    if probe.reachable:
        if probe.health_status is not None and probe.health_status >= 500:
            return HealthState.FAILING if status is None else HealthState.LOADING, f"/health returned {probe.health_status}"
        return HealthState.LOADING, probe.error or f"/health returned {probe.health_status}"
    if status is None:
        return HealthState.DOWN, probe.error or "server not reachable"
    return HealthState.LOADING, "process running, port not open yet (loading)"


def facts_from(server_info: dict[str, Any] | None, models: tuple[str, ...], max_model_len: int | None) -> ServerFacts | None:
    """ServerFacts from /server_info (SGLang puts server args at the top level) and /v1/models."""
    if server_info is None and not models:
        return None
    info = server_info or {}
    states = info.get("internal_states") or [{}]
    state0 = states[0] if isinstance(states, list) and states and isinstance(states[0], dict) else {}
    mrr = state0.get("effective_max_running_requests_per_dp") or info.get("max_running_requests")
    spec = {
        key.removeprefix("speculative_"): info[key]
        for key in ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")
        if info.get(key) is not None
    }
    return ServerFacts(
        model=(models[0] if models else "") or str(info.get("served_model_name") or info.get("model_path") or ""),
        max_running_requests=int(mrr) if isinstance(mrr, (int, float)) else None,
        max_total_num_tokens=_int_or_none(info.get("max_total_num_tokens")),
        context_len=max_model_len or _int_or_none(info.get("context_length")),
        speculative=spec,
        version=str(info.get("version", "")),
    )


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def dead_subprocess_from(body: bytes) -> str:
    """The dead component named in a 503 body (`{"error": "subprocess not alive", "component": ..., "pid": ...,
    "exit_code": ...}`), in words; "" for any other body (warmup and shutdown 503s have none)."""
    import orjson

    try:
        detail = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(detail, dict) or detail.get("error") != "subprocess not alive":
        return ""
    code = detail.get("exit_code")
    if not isinstance(code, int):
        how = "is dead"
    else:
        how = f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"
    return f"{detail.get('component', '?')} (pid {detail.get('pid', '?')}) {how}"


async def server_info_of(client: httpx.AsyncClient, base: str) -> dict[str, Any] | None:
    """GET /server_info; /get_server_info only when that is 404 (an older server), since a current server writes
    a deprecation WARNING into its journal on every /get_server_info call."""
    resp = await client.get(f"{base}/server_info")
    if resp.status_code == 404:
        resp = await client.get(f"{base}/get_server_info")
    info = resp.json() if resp.status_code == 200 else None
    return info if isinstance(info, dict) else None


async def probe_http(client: httpx.AsyncClient, base_url: str, *, want_info: bool = True) -> HttpProbe:
    """GET /health; when it is 200, /v1/models and (optionally) /server_info. Never raises."""
    import httpx

    base = base_url.rstrip("/")
    try:
        resp = await client.get(f"{base}/health")
    except httpx.ConnectError as err:
        return HttpProbe(reachable=False, error=f"connection refused ({_short(err)})")
    except httpx.TimeoutException:
        return HttpProbe(reachable=True, error="/health timed out")
    except httpx.HTTPError as err:
        return HttpProbe(reachable=False, error=_short(err))
    if resp.status_code != 200:
        dead = dead_subprocess_from(resp.content) if resp.status_code == 503 else ""
        return HttpProbe(reachable=True, health_status=resp.status_code, error=f"/health returned {resp.status_code}",
                         dead_subprocess=dead)
    models: tuple[str, ...] = ()
    max_len: int | None = None
    info: dict[str, Any] | None = None
    try:
        mresp = await client.get(f"{base}/v1/models")
        if mresp.status_code == 200:
            data = mresp.json().get("data", [])
            models = tuple(str(m.get("id", "")) for m in data if isinstance(m, dict))
            if data and isinstance(data[0], dict):
                max_len = _int_or_none(data[0].get("max_model_len"))
        if want_info:
            info = await server_info_of(client, base)
    except (httpx.HTTPError, ValueError) as err:
        return HttpProbe(reachable=True, health_status=200, models=models, error=f"server info: {_short(err)}")
    return HttpProbe(reachable=True, health_status=200, models=models, max_model_len=max_len, server_info=info)


def _short(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if len(text) < 120 else text[:117] + "..."


def snapshot(
    status: ServiceStatus | None, probe: HttpProbe, facts: ServerFacts | None, detail: str | None = None, *, was_ready: bool = False
) -> HealthSnapshot:
    """One snapshot from systemd's view and an HTTP probe; `facts` only count while READY."""
    state, derived = derive_state(status, probe, was_ready=was_ready)
    facts = facts if state is HealthState.READY else None
    return HealthSnapshot(
        state=state,
        status=status,
        http_ok=probe.health_status == 200,
        model=facts.model if facts else "",
        facts=facts,
        detail=detail or derived,
        checked_at=time.monotonic(),
    )


async def probe_once(host: Host | None, client: httpx.AsyncClient, base_url: str) -> HealthSnapshot:
    """One combined reading of systemd and HTTP."""
    status: ServiceStatus | None = None
    host_error = ""
    if host is not None:
        try:
            status = await host.status()
        except HostError as err:
            host_error = str(err)
    probe = await probe_http(client, base_url)
    state, detail = derive_state(status, probe)
    if host_error and state is HealthState.DOWN:
        detail = f"{detail}; host: {host_error}"
    return snapshot(status, probe, facts_from(probe.server_info, probe.models, probe.max_model_len), detail)


async def watch_health(
    host: Host | None,
    base_url: str,
    *,
    api_key: str | None = None,
    fast_interval: float = 0.05,
    slow_interval: float = 1.0,
    status_interval: float = 0.5,
) -> AsyncIterator[HealthSnapshot]:
    """Yield a snapshot at start and whenever the view changes.

    Polls /health every `fast_interval` while not ready (the ready transition is what an operator waits on),
    `slow_interval` once ready; asks systemd at most every `status_interval`. Server info is fetched only on
    the way into READY, not on every poll.
    """
    last: HealthSnapshot | None = None
    last_status: ServiceStatus | None = None
    last_status_at = -1e9
    served = False  # /health was 200 since the port last opened: a later 503 is not warmup
    async with await asyncio.to_thread(_new_client, api_key) as client:
        while True:
            now = time.monotonic()
            if host is not None and now - last_status_at >= status_interval:
                try:
                    last_status = await host.status()
                except HostError:
                    last_status = None
                last_status_at = now
            ready_before = last is not None and last.state is HealthState.READY
            probe = await probe_http(client, base_url, want_info=not ready_before)
            if ready_before and last is not None:
                facts = last.facts  # server info is read once, on the way into READY
            else:
                facts = facts_from(probe.server_info, probe.models, probe.max_model_len)
            served = served and probe.reachable
            snap = snapshot(last_status, probe, facts, was_ready=served)
            served = served or snap.state is HealthState.READY
            if not snap.same_view(last):
                last = snap
                yield snap
            await asyncio.sleep(slow_interval if snap.state is HealthState.READY else fast_interval)


def _new_client(api_key: str | None) -> httpx.AsyncClient:
    """The probe client. Built off the event loop (see `watch_health`): importing httpx and setting up its TLS
    context takes ~150 ms of CPU that would otherwise hold up the panel's first frame."""
    import httpx

    return httpx.AsyncClient(timeout=httpx.Timeout(2.0, connect=1.0), headers=auth_headers(api_key))


async def wait_ready(
    host: Host | None, base_url: str, *, timeout_s: float, api_key: str | None = None
) -> HealthSnapshot:
    """Wait until READY; raise `NotHealthy` (with the last snapshot) on FAILING or after `timeout_s`."""
    last: HealthSnapshot | None = None

    async def _watch() -> HealthSnapshot:
        nonlocal last
        async for snap in watch_health(host, base_url, api_key=api_key):
            last = snap
            if snap.state is HealthState.READY:
                return snap
            # Only systemd's verdict is final; HTTP errors while loading may still clear.
            if snap.state is HealthState.FAILING and snap.status is not None and snap.status.is_failed:
                raise NotHealthy(snap, f"the server failed while starting: {snap.detail}")
        raise NotHealthy(last, "health watch ended")  # pragma: no cover - watch_health never ends

    try:
        return await asyncio.wait_for(_watch(), timeout_s)
    except TimeoutError:
        detail = f" (last state: {last.state.value}, {last.detail})" if last else ""
        raise NotHealthy(last, f"the server did not become ready within {timeout_s:.0f} s{detail}") from None


class NotHealthy(Exception):
    """The server did not reach READY; carries the last snapshot so the UI can show why."""

    def __init__(self, snapshot: HealthSnapshot | None, message: str) -> None:
        super().__init__(message)
        self.snapshot = snapshot
