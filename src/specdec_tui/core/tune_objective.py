"""What a tune optimises, with no IO: the operator's latency target (SLO), what one launch measured, goodput
under the SLO, the best point per concurrency level (the schedule) and SGLang's adaptive-config JSON for it.

Why goodput is "the highest total tok/s among the levels that meet every SLO term": an operator serves at the
load their users bring; a configuration is worth the most throughput it can give while the latency promise
holds, and a level that breaks the promise is worth nothing however fast it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from specdec_tui.core.slo import SloError, SloMetric, parse_slos

STEPS = "speculative-num-steps"

Point = tuple[tuple[str, str], ...]  # (flag, value) pairs sorted by flag: one configuration of the space


def point_of(values: Mapping[str, str]) -> Point:
    return tuple(sorted((str(k), str(v)) for k, v in values.items()))


def point_label(point: Point) -> str:
    """`steps=3 topk=1 draft=4`: the short names the panel uses."""
    short = {"speculative-num-steps": "steps", "speculative-eagle-topk": "topk",
             "speculative-num-draft-tokens": "draft", "speculative-algorithm": "algo",
             "cuda-graph-max-bs-decode": "graph-bs", "max-running-requests": "max-running",
             "mem-fraction-static": "mem"}
    return " ".join(f"{short.get(k, k)}={v}" for k, v in point)


@dataclass(frozen=True, slots=True)
class Slo:
    """Latency promises in milliseconds; None: no promise on that figure."""

    ttft_p99_ms: float | None = None
    itl_p99_ms: float | None = None

    def words(self) -> str:
        terms = [f"{name} ≤ {value:g} ms" for name, value in (("TTFT p99", self.ttft_p99_ms),
                                                             ("ITL p99", self.itl_p99_ms)) if value is not None]
        return ", ".join(terms) or "no latency target"


def parse_slo(terms: Sequence[str]) -> Slo:
    """`ttft_p99=2s`, `itl_p99=50ms` (a bare number is milliseconds), read by the one SLO grammar (`core.slo`); the
    tuner's objective judges TTFT p99 and ITL p99, so any other target is refused in words."""
    found: dict[SloMetric, float] = {}
    for target in parse_slos(terms):
        if target.metric not in (SloMetric.TTFT, SloMetric.ITL) or target.pct != 99:
            raise SloError(f"SLO {target.text}: the tuner judges TTFT p99 and ITL p99; write ttft_p99=2s or "
                           "itl_p99=50ms")
        found[target.metric] = target.limit_ms
    return Slo(ttft_p99_ms=found.get(SloMetric.TTFT), itl_p99_ms=found.get(SloMetric.ITL))


class FailureKind(StrEnum):
    """Why a start failed, as far as the tuner generalises it to neighbours."""

    MEMORY = "memory"  # the static pool did not fit (Not enough memory / no room for one request)
    CAPTURE = "cuda graph capture"  # CUDA graphs did not fit outside the static pool
    OTHER = "other"  # anything else: only that exact configuration is known to fail


def failure_kind(text: str) -> FailureKind:
    """The kind of a failed start from the failure and the journal line it quotes."""
    lowered = text.lower()
    if "capture cuda graph" in lowered or "cuda graph" in lowered and "out of memory" in lowered:
        return FailureKind.CAPTURE
    if "not enough memory" in lowered or "out of memory" in lowered or "max_running_requests=0" in lowered:
        return FailureKind.MEMORY
    return FailureKind.OTHER


@dataclass(frozen=True, slots=True)
class LevelFigures:
    """One concurrency level of one launch, as the objective reads it."""

    concurrency: int
    tok_s: float
    ttft_p99_ms: float | None
    itl_p99_ms: float | None
    accept_length: float | None = None
    errors: int = 0


@dataclass(frozen=True, slots=True)
class LaunchResult:
    """What one server start told the tuner: every level at once, or why it did not start."""

    point: Point
    levels: tuple[LevelFigures, ...] = ()
    max_running_requests: int | None = None
    failure: str = ""  # empty: it started and was measured
    failure_kind: FailureKind | None = None
    trial_id: int | None = None
    host: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.failure)

    def level(self, concurrency: int) -> LevelFigures | None:
        return next((lv for lv in self.levels if lv.concurrency == concurrency), None)


def meets(level: LevelFigures, slo: Slo) -> bool:
    """Every SLO term holds at this level (a level with failed requests or no figure does not)."""
    if level.errors or level.tok_s <= 0:
        return False
    for limit, value in ((slo.ttft_p99_ms, level.ttft_p99_ms), (slo.itl_p99_ms, level.itl_p99_ms)):
        if limit is not None and (value is None or value > limit):
            return False
    return True


def objective(levels: Iterable[LevelFigures], slo: Slo) -> tuple[float, int | None]:
    """(goodput, the level that gives it): the highest tok/s among the levels meeting the SLO; (0, None) if none."""
    best: tuple[float, int | None] = (0.0, None)
    for level in levels:
        if meets(level, slo) and level.tok_s > best[0]:
            best = (level.tok_s, level.concurrency)
    return best


@dataclass(frozen=True, slots=True)
class LevelChoice:
    """The best measured point at one level, or None when no point meets the SLO there."""

    concurrency: int
    point: Point | None
    tok_s: float = 0.0


def schedule(results: Iterable[LaunchResult], levels: Sequence[int], slo: Slo) -> list[LevelChoice]:
    """Per level: the point with the most tok/s there among those meeting the SLO at that level."""
    done = [r for r in results if not r.failed]
    out = []
    for c in levels:
        best: LevelChoice = LevelChoice(c, None)
        for r in done:
            lv = r.level(c)
            if lv is not None and meets(lv, slo) and lv.tok_s > best.tok_s:
                best = LevelChoice(c, r.point, lv.tok_s)
        out.append(best)
    return out


@dataclass(frozen=True, slots=True)
class AdaptiveTier:
    batch_size: int
    candidate_steps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AdaptiveSchedule:
    """`--speculative-adaptive-config`'s tiers: from each batch size up, the steps SGLang may pick among."""

    tiers: tuple[AdaptiveTier, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, dict[str, object]]:
        return {str(t.batch_size): {"candidate_steps": list(t.candidate_steps)} for t in self.tiers}


def adaptive_schedule(choices: Sequence[LevelChoice]) -> AdaptiveSchedule | None:
    """Tiers from the measured schedule: at each level's batch size the best steps there, with the next tier's
    steps as a candidate too (so the slot can move down before the threshold, as SGLang's default does).
    None when the schedule names no steps (no level meets the SLO, or steps are not in the space)."""
    steps_at: list[tuple[int, int]] = []
    for choice in choices:
        if choice.point is None:
            continue
        steps = dict(choice.point).get(STEPS)
        if steps is None or not steps.isdigit():
            continue
        if steps_at and steps_at[-1][1] == int(steps):
            continue  # same steps as the tier below: no new tier
        steps_at.append((choice.concurrency, int(steps)))
    if not steps_at:
        return None
    tiers = []
    for i, (bs, best_steps) in enumerate(steps_at):
        candidates = {best_steps}
        if i + 1 < len(steps_at):
            candidates.add(steps_at[i + 1][1])
        tiers.append(AdaptiveTier(1 if i == 0 else bs, tuple(sorted(candidates))))
    return AdaptiveSchedule(tuple(tiers))
