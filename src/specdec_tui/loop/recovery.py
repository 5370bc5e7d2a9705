"""Automatic recovery from a failed start (opt-in: `specdec-tui doctor --recover`): the doctor names the cause and
the next rung of upstream's OOM ladder, the rung is pushed and the unit restarted, at most `max_restarts` times;
a start that still fails puts the host back on its last good unit.

The rungs come from `core.doctor_rules.start_ladder`; each flag is taken once (mem fraction to the named minimum
or lower, then the decode graphs' batch, then the draft tree, then running requests)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from specdec_tui.core.doctor_rules import FindingKind, start_failure
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import LogRecord
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import Host
from specdec_tui.loop.doctor import JOURNAL_READ, unit_flags

__all__ = ["RecoveryStep", "RecoveryResult", "recover_start", "wait_settled"]


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
