"""The tuner: one engine for the panel and `specdec-tui tune`. It asks the search (`loop.tune_search`) what to
launch next, hands each launch to a free host (an `Launcher`: a real host's trial loop, or a pure surface in
tests and benchmarks), feeds every result back, and ends with the choice, its confidence, the per-level
schedule and, where the release has adaptive speculation, the adaptive-config tiers.

Its budget is launches (server restarts): the cost that matters on a GPU host. Launches already in the host's
session (an interrupted tune's) are given as `prior` and are not repeated; a configuration that failed to start
is never launched again, nor is any candidate in its failure region. Repeats happen only at the end, when the
incumbent and the runner-up are within the noise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from specdec_tui.core.number_format import fmt_int
from specdec_tui.core.tune_objective import (
    AdaptiveSchedule,
    LaunchResult,
    LevelChoice,
    Point,
    Slo,
    adaptive_schedule,
    schedule,
)
from specdec_tui.loop.correctness_gate import GateResult
from specdec_tui.loop.tune_adaptive import AdaptiveCheck
from specdec_tui.loop.tune_search import DEFAULT_NOISE, Proposal, Search, Standing
from specdec_tui.loop.tune_space import Candidate, Refusal
from specdec_tui.loop.unit_checks import WorkflowError

DEFAULT_BUDGET = 24
MAX_BUDGET = 1000  # launches: each is a server restart and a benchmark of every level (`--budget` and the form alike)
MAX_LEVELS = 16  # levels each launch benchmarks, one after another (`--concurrency` and the profile's alike)
EventSink = Callable[[object], None]


class Launcher(Protocol):
    """One host (or a fake surface) that can start a candidate and measure every level of it."""

    @property
    def name(self) -> str: ...

    async def launch(self, candidate: Candidate, why: str) -> LaunchResult: ...


class PlanError(WorkflowError):
    """A tune refused before anything launches: a budget or a level list too large to run, in words."""


@dataclass(frozen=True, slots=True)
class TunePlan:
    """What a tune searches and how far; refused (PlanError) when built with a budget or levels it could not run,
    so `tune` and the panel's form say the same before anything launches (as the sweep's MAX_VALUES does)."""

    space: Mapping[str, Sequence[str]]
    levels: tuple[int, ...]
    slo: Slo
    budget: int = DEFAULT_BUDGET
    noise: float = DEFAULT_NOISE

    def __post_init__(self) -> None:
        if not 1 <= self.budget <= MAX_BUDGET:
            raise PlanError(f"budget: between 1 and {fmt_int(MAX_BUDGET)} launches (not {fmt_int(self.budget)}); each "
                            "is a server restart and a benchmark of every level")
        if len(self.levels) > MAX_LEVELS:
            raise PlanError(f"concurrency: at most {MAX_LEVELS} levels (not {fmt_int(len(self.levels))}); each launch "
                            "benchmarks every level, one after another")


# ---------------------------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class TuneStarted:
    candidates: int
    refused: tuple[Refusal, ...]
    budget: int
    resumed: int  # launches found in the session and not repeated
    prior: tuple[LaunchResult, ...] = ()  # those launches, shown as any launch is (a resumed tune's table)
    standing: Standing | None = None  # the best after them


@dataclass(frozen=True, slots=True)
class LaunchStarted:
    host: str
    candidate: Candidate
    why: str
    number: int  # 1-based count of launches including resumed ones
    budget: int
    repeat: bool = False


@dataclass(frozen=True, slots=True)
class LaunchLanded:
    result: LaunchResult
    standing: Standing | None
    launches: int
    budget: int
    spared: tuple[Candidate, ...]  # candidates this failure's region holds: they will cost no launch


@dataclass(frozen=True, slots=True)
class AdaptiveCheckStarted:
    """The schedule's tiers are launched as adaptive speculation, to be measured across every level."""

    config_file: str


@dataclass(slots=True)
class TuneOutcome:
    plan: TunePlan
    results: list[LaunchResult] = field(default_factory=list)
    launches: int = 0  # launches of this tune, resumed ones included
    resumed: int = 0
    retried_failures: int = 0
    standing: Standing | None = None
    schedule: list[LevelChoice] = field(default_factory=list)
    adaptive: AdaptiveSchedule | None = None
    predicted_failures: list[tuple[Candidate, LaunchResult | None]] = field(default_factory=list)
    refused: tuple[Refusal, ...] = ()
    stopped: str = ""  # why the search ended
    adaptive_file: Path | None = None  # where the tiers were written
    adaptive_check: AdaptiveCheck | None = None  # the launch that ran them, judged against the schedule
    adaptive_shipped: dict[str, str] = field(default_factory=dict)  # host → the tiers' path beside its unit
    adaptive_note: str = ""  # why the tiers were not checked or shipped, when something stood in the way
    gate: GateResult | None = None  # the correctness gate's verdict on the best (None: not run)

    @property
    def promoted(self) -> Point | None:
        """The best, unless it failed the correctness gate (then nothing is promoted, not the runner-up)."""
        return self.best if self.gate is None or self.gate.passed else None

    @property
    def found_at(self) -> int | None:
        """The launch (1-based) that first measured the final choice: launches to the answer."""
        best = self.best
        return next((i + 1 for i, r in enumerate(self.results) if r.point == best), None)

    @property
    def failed(self) -> list[Point]:
        return list(dict.fromkeys(r.point for r in self.results if r.failed))

    @property
    def best(self) -> Point | None:
        return self.standing.point if self.standing else None


@dataclass(frozen=True, slots=True)
class TuneDone:
    outcome: TuneOutcome


# ---------------------------------------------------------------------------------------------- the engine


async def run_tune(launchers: Sequence[Launcher], candidates: Sequence[Candidate], plan: TunePlan, *,
                   refused: Sequence[Refusal] = (), prior: Sequence[LaunchResult] = (),
                   on_event: EventSink | None = None) -> TuneOutcome:
    """Search `candidates` with every launcher at once until the search settles or the budget is spent.
    Cancelling it cancels the launches on their way (their hosts' own code restores what it must)."""
    emit = on_event or (lambda _event: None)
    search = Search(candidates, plan.space, plan.levels, plan.slo, noise=plan.noise)
    known = {c.point for c in candidates}
    outcome = TuneOutcome(plan=plan, refused=tuple(refused))
    for result in prior:
        if result.point in known:
            search.observe(result)
            outcome.results.append(result)
    outcome.launches = outcome.resumed = len(outcome.results)
    emit(TuneStarted(len(candidates), tuple(refused), plan.budget, outcome.resumed, tuple(outcome.results),
                     search.standing() if outcome.results else None))
    by_point = {c.point: c for c in candidates}
    idle = list(launchers)
    running: dict[asyncio.Task[LaunchResult], tuple[Launcher, Candidate]] = {}
    try:
        while True:
            while idle and outcome.launches + len(running) < plan.budget:
                pending = [c.point for _, c in running.values()]
                proposal: Proposal | None = search.propose(pending)
                repeat = False
                if proposal is None:
                    wanted = [p for p in search.repeat_wanted() if p not in pending]
                    if running or not wanted:
                        break
                    proposal = Proposal(by_point[wanted[0]], "within the noise of the best: measured again",
                                        0.0, 0.0)
                    repeat = True
                launcher = idle.pop(0)
                candidate = proposal.candidate
                if search.failed_like(candidate.point) is not None:
                    outcome.retried_failures += 1  # never by construction; counted so the report can prove it
                number = outcome.launches + len(running) + 1
                emit(LaunchStarted(launcher.name, candidate, proposal.why, number, plan.budget, repeat))
                task = asyncio.create_task(launcher.launch(candidate, proposal.why))
                running[task] = (launcher, candidate)
            if not running:
                break
            done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                launcher, candidate = running.pop(task)
                result = task.result()
                before = {c.point for c in candidates if search.failed_like(c.point) is not None}
                search.observe(result)
                outcome.results.append(result)
                outcome.launches += 1
                idle.append(launcher)
                spared = tuple(c for c in candidates if c.point not in before and c.point not in search.results
                               and search.failed_like(c.point) is not None)
                emit(LaunchLanded(result, search.standing(), outcome.launches, plan.budget, spared))
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    outcome.standing = search.standing()
    outcome.stopped = ("the budget of launches is spent" if outcome.launches >= plan.budget and
                       search.propose() is not None else "no untried configuration could beat the best by more "
                       "than the noise" if outcome.standing is not None else "no untried configuration is "
                       f"predicted to meet {plan.slo.words()} at any level (no launch met it)")
    outcome.schedule = schedule(outcome.results, plan.levels, plan.slo)
    outcome.adaptive = adaptive_schedule(outcome.schedule)
    outcome.predicted_failures = search.predicted_failures()
    emit(TuneDone(outcome))
    return outcome
