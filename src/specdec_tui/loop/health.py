"""Is the server up? Readiness from systemd's state plus SGLang's HTTP endpoints.

SGLang binds its port only when the model is loaded, so "process alive, port refused" means loading; from bind
until its warmup request finishes `/health` answers 503 with no body ("warming up"). A 503 once it has served
means it is shutting down or unhealthy; a 503 whose JSON body names a dead subprocess is a failure.
(upstream: python/sglang/srt/entrypoints/http_server.py health_generate, _dead_subprocess_response)
One watcher per host (`HealthWatch`) polls fast while a restart waits for READY (detection within ~100 ms of
/health turning 200) and slowly otherwise, and yields a snapshot only when something the operator sees has changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from specdec_tui.core.results import ServerFacts
from specdec_tui.hosts.base import Host, ServiceStatus
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.health_probe import HttpProbe, facts_from, new_probe_client, probe_http

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


class HealthWatch:
    """The one health poller of a host. The panel's view (`changes`) and a restart's wait (`wait_ready`) read
    the same probes, so a restart never adds a second poller beside the panel's (each probe is an access line
    in the server's journal).

    Polls every `fast_interval` only while someone waits for READY (a restart in progress: the ready
    transition is what the operator waits on), `idle_interval` while not ready otherwise, `slow_interval`
    once ready. Once ready, /v1/models and server info are not asked again while /health stays 200.
    The poll task runs while anyone reads the watch and stops with the last reader.
    """

    def __init__(self, host: Host | None, base_url: str, *, api_key: str | None = None, fast_interval: float = 0.05,
                 idle_interval: float = 1.0, slow_interval: float = 5.0, status_interval: float = 0.5) -> None:
        self.host = host
        self.base_url = base_url
        self.api_key = api_key
        self.fast_interval = fast_interval
        self.idle_interval = idle_interval
        self.slow_interval = slow_interval
        self.status_interval = status_interval
        self.latest: HealthSnapshot | None = None  # the last probe's snapshot
        self.probes = 0  # probes made so far (tests and the status of the watch)
        self._latest_began = -1e9  # time.monotonic() when the latest probe began
        self._view: HealthSnapshot | None = None  # the last snapshot whose view changed
        self._view_seq = 0
        self._waiting = 0  # restarts waiting for READY: poll fast
        self._fresh = False  # a wait began: ask systemd now, forget what the last start served
        self._readers = 0
        self._task: asyncio.Task[None] | None = None
        self._probed = asyncio.Condition()
        self._wake = asyncio.Event()

    # -- readers -----------------------------------------------------------------------------------
    async def changes(self) -> AsyncIterator[HealthSnapshot]:
        """Yield the current snapshot at start and then whenever the view changes (the latest wins)."""
        seen = 0
        self._acquire()
        try:
            while True:
                async with self._probed:
                    await self._probed.wait_for(functools.partial(self._changed_since, seen))
                    self._raise_if_ended()
                    snap, seen = self._view, self._view_seq
                if snap is not None:
                    yield snap
        finally:
            await self._release()

    async def wait_ready(self, timeout_s: float) -> HealthSnapshot:
        """Wait until READY on a probe made after this call; raise `NotHealthy` (with the last snapshot) on a
        failed unit or after `timeout_s`. Polls fast while it waits."""
        began = time.monotonic()
        self._waiting += 1
        self._fresh = True
        self._wake.set()
        self._acquire()
        last: HealthSnapshot | None = None
        try:
            async with asyncio.timeout(timeout_s), self._probed:
                while True:
                    await self._probed.wait_for(functools.partial(self._probed_since, began))
                    self._raise_if_ended()
                    snap = self.latest
                    if snap is not None:
                        last = snap
                        if snap.state is HealthState.READY:
                            return snap
                        # Only systemd's verdict is final; HTTP errors while loading may still clear.
                        if snap.state is HealthState.FAILING and snap.status is not None and snap.status.is_failed:
                            raise NotHealthy(snap, f"the server failed while starting: {snap.detail}")
                    began = self._latest_began + 1e-9  # the next probe
        except TimeoutError:
            detail = f" (last state: {last.state.value}, {last.detail})" if last else ""
            raise NotHealthy(last, f"the server did not become ready within {timeout_s:.0f} s{detail}") from None
        finally:
            self._waiting -= 1
            await self._release()

    # -- the poll task -------------------------------------------------------------------------------
    def _acquire(self) -> None:
        self._readers += 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._poll())

    async def _release(self) -> None:
        self._readers -= 1
        if self._readers == 0 and self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _changed_since(self, seen: int) -> bool:
        return self._view_seq > seen or self._poll_ended()

    def _probed_since(self, began: float) -> bool:
        return self._latest_began >= began or self._poll_ended()

    def _poll_ended(self) -> bool:
        return self._task is not None and self._task.done()

    def _raise_if_ended(self) -> None:
        if self._task is not None and self._task.done() and not self._task.cancelled():
            err = self._task.exception()
            raise err if err is not None else NotHealthy(self.latest, "health watch ended")

    async def _poll(self) -> None:
        status: ServiceStatus | None = None
        status_at = -1e9
        previous: HttpProbe | None = None  # the last probe, while it found the server ready
        served = False  # /health was 200 since the port last opened: a later 503 is not warmup
        try:
            async with await asyncio.to_thread(new_probe_client, self.api_key) as client:
                while True:
                    began = time.monotonic()
                    if self._fresh:  # a restart: what the last start served and systemd said are stale
                        self._fresh, served, previous, status_at = False, False, None, -1e9
                    if self.host is not None and began - status_at >= self.status_interval:
                        try:
                            status = await self.host.status()
                        except HostError:
                            status = None
                        status_at = began
                    probe = await probe_http(client, self.base_url, want_info=previous is None, known=previous)
                    if previous is not None and self.latest is not None:
                        facts = self.latest.facts  # server info is read once, on the way into READY
                    else:
                        facts = facts_from(probe.server_info, probe.models, probe.max_model_len)
                    served = served and probe.reachable
                    snap = snapshot(status, probe, facts, was_ready=served)
                    served = served or snap.state is HealthState.READY
                    previous = probe if snap.state is HealthState.READY else None
                    await self._publish(snap, began)
                    await self._sleep(self._interval(snap))
        finally:
            async with self._probed:
                self._probed.notify_all()

    async def _publish(self, snap: HealthSnapshot, began: float) -> None:
        async with self._probed:
            self.probes += 1
            self.latest, self._latest_began = snap, began
            if not snap.same_view(self._view):
                self._view, self._view_seq = snap, self._view_seq + 1
            self._probed.notify_all()

    def _interval(self, snap: HealthSnapshot) -> float:
        if self._waiting or self._fresh:
            return self.fast_interval
        return self.slow_interval if snap.state is HealthState.READY else self.idle_interval

    async def _sleep(self, seconds: float) -> None:
        """Sleep, unless a wait begins (a restart wants a probe now)."""
        self._wake.clear()
        if self._fresh:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)


async def watch_health(
    host: Host | None,
    base_url: str,
    *,
    api_key: str | None = None,
    fast_interval: float = 0.05,
    idle_interval: float = 1.0,
    slow_interval: float = 5.0,
    status_interval: float = 0.5,
) -> AsyncIterator[HealthSnapshot]:
    """A watch of its own (`HealthWatch.changes`), for a caller that has none to share."""
    watch = HealthWatch(host, base_url, api_key=api_key, fast_interval=fast_interval, idle_interval=idle_interval,
                        slow_interval=slow_interval, status_interval=status_interval)
    async for snap in watch.changes():
        yield snap



async def wait_ready(
    host: Host | None, base_url: str, *, timeout_s: float, api_key: str | None = None
) -> HealthSnapshot:
    """`HealthWatch.wait_ready` on a watch of its own (headless commands, which have no panel watch)."""
    return await HealthWatch(host, base_url, api_key=api_key).wait_ready(timeout_s)


class NotHealthy(Exception):
    """The server did not reach READY; carries the last snapshot so the UI can show why."""

    def __init__(self, snapshot: HealthSnapshot | None, message: str) -> None:
        super().__init__(message)
        self.snapshot = snapshot
