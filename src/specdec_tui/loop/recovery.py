"""Automatic recovery from a failed start (opt-in: `specdec-tui doctor --recover`; always asked in the panel): the
doctor names the cause and the next rung of upstream's OOM ladder, the rung is pushed and the unit restarted, at
most `max_restarts` times; a start that still fails puts the host back on its last good unit.

`recover_start` works on the host directly (the headless verb); `recover_pushed` goes through the panel's trial
loop (each try is a trial, pushed under the loop's rules and rolled back as the loop does), after `offered_rung`
has named the first rung for the panel's question.

The rungs come from `core.doctor_rules.start_ladder`; each flag is taken once (mem fraction to the named minimum
or lower, then the decode graphs' batch, then the draft tree, then running requests)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from specdec_tui.core.doctor_rules import Finding, FindingKind, start_failure
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, LogRecord, ReadyRecord, ServerArgsRecord
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host
from specdec_tui.loop.doctor import JOURNAL_READ, unit_flags

if TYPE_CHECKING:
    from specdec_tui.core.session import Trial
    from specdec_tui.loop.trial import TrialLoop

__all__ = ["last_good_unit", "RecoveryStep", "RecoveryResult", "recover_start", "wait_settled", "offered_rung", "recover_pushed",
           "failed_start"]


@dataclass(frozen=True, slots=True)
class RecoveryStep:
    cause: str
    words: str
    fix: dict[str, str | None]
    came_up: bool


@dataclass(slots=True)
class RecoveryResult:
    recovered: bool = False
    steps: list[RecoveryStep] = field(default_factory=list)
    back_on_good: bool = False
    note: str = ""

    @property
    def restarts(self) -> int:
        return len(self.steps)


async def _start_records(host: Host) -> list[LogRecord]:
    started = (await host.status()).active_enter
    records: list[LogRecord] = []
    async for entry in host.journal(follow=False, lines=JOURNAL_READ):
        if entry.kind == "line" and (started is None or entry.timestamp >= started):
            record = parse_line(entry.message)
            if record.timestamp is None:
                record.timestamp = entry.timestamp
            records.append(record)
    return records


async def wait_settled(host: Host, timeout_s: float) -> bool:
    """True once the current start is ready to serve; False when it went down (or `timeout_s` passed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = await host.status()
        if not status.is_running and status.active_state != "activating":
            return False
        if any(r.kind == "ready" for r in await _start_records(host)):
            return True
        await asyncio.sleep(0.2)
    return False


async def recover_start(host: Host, *, last_good: str | None, max_restarts: int = 2,
                        timeout_s: float = 900.0) -> RecoveryResult:
    """Recover the host's failed start (see the module doc). Nothing is done when the start did not fail."""
    result = RecoveryResult()
    tried: set[str] = set()
    for _ in range(max_restarts):
        text = await host.read_unit()
        finding = start_failure(await _start_records(host), unit_flags(text), frozenset(tried))
        if finding is None or finding.kind is not FindingKind.START_FAILURE:
            result.note = "the start did not fail" if not result.steps else ""
            result.recovered = bool(result.steps)
            return result
        if not finding.fixable:
            result.note = f"no flag edit follows from the cause: {finding.evidence[0].line}"
            break
        tried.update(finding.fix)
        new_text = UnitFile.parse(text).set_flags(finding.fix, unset=finding.remove).text
        await host.push(new_text)
        await host.restart()
        came_up = await wait_settled(host, timeout_s)
        result.steps.append(RecoveryStep(finding.evidence[0].line, finding.fix_words, dict(finding.fix), came_up))
        if came_up:
            result.recovered = True
            return result
    if last_good is not None:
        await host.push(last_good)
        await host.restart()
        result.back_on_good = await wait_settled(host, timeout_s)
    return result


def failed_start(records: Sequence[LogRecord]) -> list[LogRecord]:
    """The newest start (from systemd's "Started" line or SGLang's server_args) that logged a fatal error and never
    came up; empty when there is none (a rollback that came up after it does not hide it)."""
    windows: list[list[LogRecord]] = [[]]
    for record in records:
        if isinstance(record, ServerArgsRecord) or record.message.startswith(("Started ", "Starting ")):
            windows.append([])
        windows[-1].append(record)
    for window in reversed(windows):
        if any(isinstance(r, ErrorRecord) and r.fatal for r in window) and not any(isinstance(r, ReadyRecord)
                                                                                  for r in window):
            return window
    return []


async def _records_since(host: Host, since: datetime | None) -> list[LogRecord]:
    records: list[LogRecord] = []
    async for entry in host.journal(follow=False, lines=JOURNAL_READ):
        stamp = entry.timestamp if entry.timestamp.tzinfo is not None else entry.timestamp.astimezone()
        if entry.kind == "line" and (since is None or stamp >= since):
            record = parse_line(entry.message)
            if record.timestamp is None:
                record.timestamp = entry.timestamp
            records.append(record)
    return records


async def offered_rung(host: Host, failed_text: str, since: datetime | None,
                       tried: frozenset[str] = frozenset()) -> Finding | None:
    """The doctor's start-failure finding for `failed_text`'s start (logged after `since`: its push), naming the
    next rung; None when no start failed or no flag edit follows from its cause."""
    window = failed_start(await _records_since(host, since))
    finding = start_failure(window, unit_flags(failed_text), tried)
    return finding if finding is not None and finding.fixable else None


async def recover_pushed(loop: TrialLoop, failed_text: str, first: Finding, *, last_good: str | None,
                         max_restarts: int = 2) -> RecoveryResult:
    """The panel's recovery, after its question: each rung is pushed through the trial loop (a trial each, with
    the loop's own rollback when it fails), the next rung read from that try's failed start, at most
    `max_restarts` tries; a start that still fails ends with the host on `last_good`."""
    result = RecoveryResult()
    text, finding, tried = failed_text, first, set[str]()
    for _ in range(max_restarts):
        tried.update(finding.fix)
        text = UnitFile.parse(text).set_flags(finding.fix, unset=finding.remove).text
        trial = await loop.push_and_restart(text)
        came_up = trial.status != "failed"
        result.steps.append(RecoveryStep(finding.evidence[0].line, finding.fix_words, dict(finding.fix), came_up))
        if came_up:
            result.recovered = True
            return result
        nxt = await offered_rung(loop.host, text, trial.pushed_at, frozenset(tried))
        if nxt is None:
            result.note = "no further rung of the ladder applies"
            break
        finding = nxt
    if last_good is None:
        result.note = "the last good unit is not known: the host stays as the last try left it"
        return result
    if await loop.host.read_unit() != last_good or not (await loop.host.status()).is_running:
        await loop.push_and_restart(last_good)
    result.back_on_good = await loop.host.read_unit() == last_good and (await loop.host.status()).is_running
    return result


def last_good_unit(trials: Sequence[Trial], host: str, failed_text: str) -> str | None:
    """The newest unit of this host's session that came up (its trial has the server's facts, or ended ok), other
    than the one that failed; None when the session has none."""
    for trial in reversed(trials):
        came_up = trial.facts is not None or trial.status == "ok"
        if came_up and trial.host in ("", host) and trial.unit_text and trial.unit_text != failed_text:
            return trial.unit_text
    return None
