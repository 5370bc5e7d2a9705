"""Every configured host at a glance: its health, what it runs (model, speculative algorithm/steps/topk/draft
tokens, max running requests), the last trial's c=1 and best tok/s, and the errors its journal logged since the
unit last started.

`FleetPoller` owns one connection per host and reuses it from poll to poll; hosts are polled concurrently, each
under its own time limit, so one unreachable host shows as such and slows no other.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.core.config import Config
from specdec_tui.core.latency import trial_pick
from specdec_tui.core.results import ServerFacts
from specdec_tui.core.session import Session, SessionError, load_session
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, cause_rank
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host, HostInfo, ServiceStatus
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.factory import open_host
from specdec_tui.loop.current_session import current_session_of
from specdec_tui.loop.doctor import DoctorWatch, gauges_from, unit_flags, watched
from specdec_tui.loop.health import HealthState, derive_state
from specdec_tui.loop.health_probe import facts_from, new_probe_client, probe_http
from specdec_tui.loop.same_server import refuse_same_server
from specdec_tui.loop.unit_checks import api_key_from

if TYPE_CHECKING:
    import httpx

UNREACHABLE = "unreachable"
SPEC_FLAGS = {
    "algorithm": "--speculative-algorithm",
    "steps": "--speculative-num-steps",
    "topk": "--speculative-eagle-topk",
    "draft_tokens": "--speculative-num-draft-tokens",
}
JOURNAL_FIRST_READ = 5000  # lines read back the first time a host is seen; then only what is new


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One host as the fleet view shows it. `state` is a HealthState value or "unreachable"."""

    name: str
    state: str
    detail: str = ""
    address: str = ""
    model: str = ""
    spec: dict[str, str] | None = None  # algorithm / steps / topk / draft_tokens, from the unit; None: not read
    max_running_requests: int | None = None
    last_c1_tok_s: float | None = None
    best_tok_s: float | None = None
    errors_since_start: int = 0
    cause: str = ""
    findings: tuple[str, ...] = ()  # the doctor's active findings (their kinds) since the unit started
    took_s: float = 0.0

    @property
    def spec_text(self) -> str:
        if self.spec is None:
            return "–"
        if not self.spec.get("algorithm"):
            return "off"
        parts = [self.spec["algorithm"]]
        parts += [f"{k.replace('_tokens', '')}={self.spec[k]}" for k in ("steps", "topk", "draft_tokens") if self.spec.get(k)]
        return " ".join(parts)


@dataclass(slots=True)
class _Seen:
    """What the poller remembers of one host between polls."""

    host: Host | None = None
    connected: bool = False
    client: httpx.AsyncClient | None = None  # the host's HTTP probe client, with its API key
    journal_cursor: str | None = None
    started: datetime | None = None  # the unit's ActiveEnterTimestamp the error count belongs to
    errors: int = 0
    cause: str = ""
    cause_rank: int = 0
    facts: ServerFacts | None = None
    session_key: tuple[object, ...] | None = None
    session_figures: tuple[float | None, float | None] = (None, None)
    doctor: DoctorWatch | None = None


def _flags_of(text: str) -> dict[str, str | None] | None:
    try:
        return UnitFile.parse(text).flags()
    except ValueError:  # UnitSyntaxError
        return None


def _spec_from_unit(text: str) -> dict[str, str]:
    try:
        unit = UnitFile.parse(text)
    except ValueError:  # UnitSyntaxError: a unit that does not parse shows no spec, the health still does
        return {}
    found = {key: unit.get_flag(flag) for key, flag in SPEC_FLAGS.items()}
    return {key: value for key, value in found.items() if value}


def session_figures(session: Session, running: Mapping[str, str | None] | None = None
                    ) -> tuple[float | None, float | None]:
    """The c=1 tok/s and the best tok/s (`core.latency.pick`: within the TTFT limit) of the latest finished trial
    of the configuration the host runs now (`running`, its unit's flags; None: the latest finished trial), so a row
    never shows the figure of another configuration than the one its other columns describe."""
    measured = [t for t in session.trials if t.levels and t.status == "ok"]
    if running is not None:
        measured = [t for t in measured if t.flags == dict(running)]
    last = measured[-1] if measured else None
    if last is None:
        return None, None
    c1, best = last.level(1), trial_pick(last).best
    return (c1.output_tok_s if c1 else None), (best.output_tok_s if best else None)


class FleetPoller:
    """Polls every host of `config` (or `names`) concurrently over reused connections."""

    def __init__(
        self,
        config: Config,
        *,
        names: list[str] | None = None,
        sessions_dir: Path | None = None,
        timeout_s: float = 5.0,
        opener: Callable[[Config, str], Host] | None = None,
    ) -> None:
        self.config = config
        self.names = names if names is not None else fleet_names(config)
        self.sessions_dir = sessions_dir
        self.timeout_s = timeout_s
        self._open = opener or (lambda cfg, name: open_host(cfg, name, keep_running=True))
        self._seen: dict[str, _Seen] = {name: _Seen() for name in self.names}
        self._shared_client: httpx.AsyncClient | None = None  # for every host without an API key (one TLS setup)

    async def poll(self) -> list[FleetRow]:
        """One row per host, in name order; a host that does not answer within `timeout_s` is UNREACHABLE.
        Raises `SameServer` (naming them) when two names are one server."""
        if self._shared_client is None:  # built off the loop: httpx's import and TLS setup take ~150 ms
            self._shared_client = await asyncio.to_thread(new_probe_client, None)
        self._refuse_same_server()
        return list(await asyncio.gather(*(self._poll_one(name) for name in self.names)))

    def _refuse_same_server(self) -> None:
        """Raises SameServer naming the hosts that are one machine and unit (`loop.same_server`): a fleet of them
        would show one server as several (issue 35: it polled such a server once; now it is refused, like a
        parallel sweep and a tune on them)."""
        infos: list[tuple[str, HostInfo]] = []
        for name in self.names:
            seen = self._seen[name]
            if name in self.config.clusters:
                continue  # a cluster's row stands beside its nodes' rows by design
            if seen.host is None:
                try:
                    seen.host = self._open(self.config, name)
                except HostError:
                    continue  # said by its poll
            infos.append((name, seen.host.info))
        refuse_same_server(infos)

    async def close(self) -> None:
        for name, seen in self._seen.items():
            await self._forget(name)
            client, seen.client = seen.client, None
            if client is not None and client is not self._shared_client:
                await client.aclose()
        if self._shared_client is not None:
            await self._shared_client.aclose()
            self._shared_client = None

    async def _client_for(self, name: str) -> httpx.AsyncClient:
        api_key = api_key_from(self.config.host_settings(name))
        if api_key:
            return await asyncio.to_thread(new_probe_client, api_key)
        assert self._shared_client is not None  # made by poll()
        return self._shared_client

    async def _poll_one(self, name: str) -> FleetRow:
        started = time.monotonic()
        address = _address(self.config, name)
        try:
            row = await asyncio.wait_for(self._read(name), self.timeout_s)
        except TimeoutError:
            await self._forget(name)
            row = FleetRow(name, UNREACHABLE, f"no answer within {self.timeout_s:.0f} s", address=address)
        except HostError as err:
            await self._forget(name)
            row = FleetRow(name, UNREACHABLE, err.message, address=address)
        return _with_took(row, time.monotonic() - started)

    async def _forget(self, name: str) -> None:
        """Drops a host's connection after a failure, so the next poll opens a fresh one."""
        seen = self._seen[name]
        host, seen.host, seen.connected = seen.host, None, False
        if host is not None:
            try:
                await asyncio.wait_for(host.close(), 1.0)
            except (HostError, TimeoutError):
                pass

    async def _read(self, name: str) -> FleetRow:
        seen = self._seen[name]
        if seen.host is None:
            seen.host = self._open(self.config, name)
        if not seen.connected:
            await seen.host.connect()
            seen.connected = True
        host = seen.host
        if seen.client is None:
            seen.client = await self._client_for(name)
        status, text = await asyncio.gather(host.status(), host.read_unit())
        was_ready = seen.facts is not None and seen.started == status.active_enter
        probe = await probe_http(seen.client, host.info.base_url, want_info=not was_ready)
        state, detail = derive_state(status, probe, was_ready=was_ready)
        if state is HealthState.READY and not was_ready:
            seen.facts = facts_from(probe.server_info, probe.models, probe.max_model_len)
        elif state is not HealthState.READY:
            seen.facts = None
        await self._count_errors(seen, host, status, text)
        if seen.doctor is not None:  # the gauges too: a server that logs no decode lines still shows a queue there
            gauges = await gauges_from(seen.client, host.info.base_url) if state is HealthState.READY else None
            seen.doctor.observe_gauges(gauges, datetime.now().astimezone())
        c1, best = self._session_figures(name, seen, _flags_of(text))
        facts = seen.facts
        return FleetRow(
            name, state.value, detail, address=_address(self.config, name),
            model=facts.model if facts else "", spec=_spec_from_unit(text),
            max_running_requests=facts.max_running_requests if facts else None,
            last_c1_tok_s=c1, best_tok_s=best, errors_since_start=seen.errors, cause=seen.cause,
            findings=tuple(kind.value for kind in seen.doctor.active) if seen.doctor else (),
        )

    async def _count_errors(self, seen: _Seen, host: Host, status: ServiceStatus, unit_text: str) -> None:
        """Error lines since the unit last started, and the doctor's findings over them: read back once, then only
        the journal's new lines."""
        if status.active_enter != seen.started or seen.doctor is None:
            seen.started, seen.errors, seen.cause, seen.cause_rank = status.active_enter, 0, "", 0
            seen.doctor = DoctorWatch()
        seen.doctor.flags = unit_flags(unit_text)
        parsed_lines = []
        lines = None if seen.journal_cursor else JOURNAL_FIRST_READ
        async for record in host.journal(after_cursor=seen.journal_cursor, follow=False, lines=lines):
            if record.kind != "line":
                continue
            if record.cursor:
                seen.journal_cursor = record.cursor
            if seen.started is not None and record.timestamp < seen.started:
                continue
            parsed = parse_line(record.message)
            if parsed.timestamp is None:
                parsed.timestamp = record.timestamp
            if watched(parsed):
                parsed_lines.append(parsed)
            if isinstance(parsed, ErrorRecord):
                seen.errors += 1
                rank = cause_rank(parsed)  # the specific cause outranks the generic follow-ups, as in start_failure
                if not seen.cause or rank < seen.cause_rank:
                    seen.cause, seen.cause_rank = parsed.message[:200], rank
        seen.doctor.feed(parsed_lines)

    def _session_figures(self, name: str, seen: _Seen, running: dict[str, str | None] | None
                         ) -> tuple[float | None, float | None]:
        if self.sessions_dir is None:
            return None, None
        path = current_session_of(name, self.sessions_dir)
        if path is None:
            return None, None
        key = (path, path.stat().st_mtime, tuple(sorted((running or {}).items(), key=lambda kv: kv[0])))
        if key != seen.session_key:
            try:
                seen.session_figures = session_figures(load_session(path), running)
            except SessionError:
                seen.session_figures = (None, None)
            seen.session_key = key
        return seen.session_figures


def fleet_names(config: Config) -> list[str]:
    """Every host, then every cluster (a cluster is one row: node 0 serves HTTP, the state is its worst node's)."""
    return sorted(config.hosts) + sorted(config.clusters)


def _address(config: Config, name: str) -> str:
    cluster = config.clusters.get(name)
    if cluster is not None:
        return "cluster: " + ", ".join(cluster.nodes)
    host = config.hosts.get(name)
    return host.address if host else ""


def _with_took(row: FleetRow, took_s: float) -> FleetRow:
    return replace(row, took_s=round(took_s, 3))


def rows_as_json(rows: list[FleetRow]) -> list[Mapping[str, object]]:
    return [
        {
            "name": r.name, "state": r.state, "detail": r.detail, "address": r.address, "model": r.model,
            "speculative": r.spec, "max_running_requests": r.max_running_requests,
            "last_c1_tok_s": r.last_c1_tok_s, "best_tok_s": r.best_tok_s,
            "errors_since_start": r.errors_since_start, "cause": r.cause, "findings": list(r.findings),
            "took_s": r.took_s,
        }
        for r in rows
    ]
