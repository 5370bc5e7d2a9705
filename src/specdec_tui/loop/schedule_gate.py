"""The correctness gate over a tune's schedule: every configuration the schedule names (the best first) answers the
fixed prompts as the same unit without speculation, or it leaves the schedule; the schedule is then chosen again
from the launches that are left (a level falls to its runner-up, which is gated in turn) and the adaptive tiers are
built from what passed. So neither the schedule nor the tiers file names a configuration the gate rejected.

At most `MAX_GATES` configurations are gated (each is two restarts); a level whose choice is still ungated after
that names none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from specdec_tui.core.tune_objective import LevelChoice, Point, adaptive_schedule, point_label, schedule
from specdec_tui.loop.correctness_gate import GateResult, gate_quietly
from specdec_tui.loop.events import Phase

if TYPE_CHECKING:
    from specdec_tui.hosts.base import Host
    from specdec_tui.loop.tune import EventSink, TuneOutcome

__all__ = ["MAX_GATES", "gate_schedule"]

MAX_GATES = 4


def _named(choices: list[LevelChoice], best: Point | None) -> list[Point]:
    """The schedule's configurations, the best first, each once."""
    points = [best] if best is not None and any(c.point == best for c in choices) else []
    return list(dict.fromkeys([*points, *(c.point for c in choices if c.point is not None)]))


async def gate_schedule(host: Host, outcome: TuneOutcome, unit_of: Callable[[Point], str], emit: EventSink, *,
                        api_key: str | None = None) -> dict[Point, GateResult]:
    """Gate the schedule's configurations on `host` (see the module doc); `outcome.schedule`, `.adaptive` and
    `.gate` (the best's verdict) are set from the verdicts, which are returned by configuration."""
    verdicts: dict[Point, GateResult] = {}
    best = outcome.best
    if best is not None:  # the best is gated even when it meets the SLO at no level of the schedule
        verdicts[best] = await _gate(host, best, unit_of, emit, api_key)
    while True:
        rejected = {p for p, v in verdicts.items() if not v.passed}
        choices = schedule([r for r in outcome.results if r.point not in rejected], outcome.plan.levels,
                           outcome.plan.slo)
        ungated = [p for p in _named(choices, best) if p not in verdicts]
        if not ungated or len(verdicts) >= MAX_GATES:
            break
        verdicts[ungated[0]] = await _gate(host, ungated[0], unit_of, emit, api_key)
    passed = {p for p, v in verdicts.items() if v.passed}
    outcome.schedule = [c if c.point is None or c.point in passed else LevelChoice(c.concurrency, None)
                        for c in choices]
    outcome.adaptive = adaptive_schedule(outcome.schedule)
    if best is not None:
        outcome.gate = verdicts[best]
    return verdicts


async def _gate(host: Host, point: Point, unit_of: Callable[[Point], str], emit: EventSink,
                api_key: str | None) -> GateResult:
    emit(Phase("gate", f"correctness gate: {point_label(point)} against the same unit without speculation, "
                       "temperature 0"))
    return await gate_quietly(host, unit_of(point), api_key=api_key)
