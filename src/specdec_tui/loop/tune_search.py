"""The tuner's search, pure: which candidate to launch next and when to stop, from what every launch measured.

Model: per concurrency level, one Gaussian process each over log tok/s, log TTFT p99 and log ITL p99 (every level
of a launch is an observation), so one launch teaches the whole surface. A candidate's optimistic goodput takes
each level's tok/s at its upper bound where the latencies' lower bounds meet the SLO; the next launch is the
candidate with the highest optimistic goodput, and the search ends when no candidate could beat the incumbent by
more than the benchmark's noise. Failures are regions, not points: a start that failed for memory fails for every
candidate that needs at least as much memory (more steps/topk/draft/max running, a smaller static fraction, the
rest equal); a refused CUDA-graph capture for every candidate whose graphs are at least as large (more
steps/topk/draft/graph batch, a larger static fraction). Those candidates are never launched. Acceptance and
max_running_requests are kept per launch for the reasons shown; a level above a candidate's measured
max_running_requests queues, which the TTFT model sees.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from specdec_tui.core.confidence import RUN_NOISE, compare_samples
from specdec_tui.core.number_format import fmt_int
from specdec_tui.core.tune_objective import (
    FailureKind,
    LaunchResult,
    Point,
    Slo,
    meets,
    objective,
    point_label,
)
from specdec_tui.loop.tune_gp import Gp, GpFit, Vector
from specdec_tui.loop.tune_space import ALGORITHM, DRAFT, STEPS, TOPK, Candidate, coordinates

KAPPA = 2.0  # how far above the prediction a candidate may plausibly be (in standard deviations): the stop rule
KAPPA_CHOOSE = 1.0  # the bound the next launch is chosen by: nearer the prediction, so promising regions are
# measured before far corners are explored (the stop rule still explores what could beat the best)
DEFAULT_NOISE = RUN_NOISE  # relative scatter of one launch's goodput on one configuration (core.confidence owns it)
FAIL_LIKELY = 0.5  # a candidate whose predicted failure chance is above this is not launched

# +1: more of it needs more memory; -1: less of it does; 0: must be equal for the failure to carry over.
_MEMORY_DIRECTION = {STEPS: 1, TOPK: 1, DRAFT: 1, "max-running-requests": 1, "mem-fraction-static": -1,
                     "cuda-graph-max-bs-decode": 0, ALGORITHM: 0}
_CAPTURE_DIRECTION = {STEPS: 1, TOPK: 1, DRAFT: 1, "cuda-graph-max-bs-decode": 1, "mem-fraction-static": 1,
                      "max-running-requests": 0, ALGORITHM: 0}


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def at_least_as_hungry(point: Point, failed: Point, kind: FailureKind) -> bool:
    """`point` needs at least what `failed` needed in the way that made it fail (see the module doc)."""
    if kind is FailureKind.OTHER:
        return point == failed
    directions = _MEMORY_DIRECTION if kind is FailureKind.MEMORY else _CAPTURE_DIRECTION
    mine, theirs = dict(point), dict(failed)
    for flag, value in theirs.items():
        other = mine.get(flag, value)
        direction = directions.get(flag, 0)
        a, b = _num(other), _num(value)
        if direction == 0 or a is None or b is None:
            if other != value:
                return False
        elif (a - b) * direction < 0:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Proposal:
    candidate: Candidate
    why: str
    predicted: float  # goodput the model expects
    optimistic: float  # what it might be


@dataclass(frozen=True, slots=True)
class Standing:
    """The incumbent and how sure the tuner is of it."""

    point: Point
    goodput: float
    level: int | None
    runner_up: Point | None
    margin: float  # relative lead over the runner-up (inf when there is none)
    confidence: str


@dataclass(slots=True)
class Search:
    candidates: Sequence[Candidate]
    space: Mapping[str, Sequence[str]]
    levels: Sequence[int]
    slo: Slo
    noise: float = DEFAULT_NOISE
    results: dict[Point, list[LaunchResult]] = field(default_factory=dict)
    _coords: dict[Point, Vector] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._coords = {c.point: coordinates(c.point, self.space) for c in self.candidates}

    # ------------------------------------------------------------------ what is known

    def observe(self, result: LaunchResult) -> None:
        self.results.setdefault(result.point, []).append(result)

    def launched(self, point: Point) -> bool:
        return point in self.results

    def failed_like(self, point: Point) -> LaunchResult | None:
        """The failed launch whose region holds `point` (itself, or a neighbour needing no more)."""
        for runs in self.results.values():
            for r in runs:
                if r.failed and r.failure_kind is not None and at_least_as_hungry(point, r.point, r.failure_kind):
                    return r
        return None

    def goodput(self, point: Point) -> tuple[float, int | None]:
        """Mean goodput over the point's launches (its level: the most frequent best level)."""
        runs = [r for r in self.results.get(point, []) if not r.failed]
        if not runs:
            return 0.0, None
        scores = [objective(r.levels, self.slo) for r in runs]
        return sum(s[0] for s in scores) / len(scores), scores[-1][1]

    def ranking(self) -> list[tuple[Point, float, int | None]]:
        ranked = [(p, *self.goodput(p)) for p in self.results]
        return sorted((r for r in ranked if r[1] > 0), key=lambda r: -r[1])

    def standing(self) -> Standing | None:
        ranked = self.ranking()
        if not ranked:
            return None
        (best, value, level), rest = ranked[0], ranked[1:]
        runner, margin = (rest[0][0], value / rest[0][1] - 1.0) if rest else (None, math.inf)
        repeats = len(self.results[best])
        untried = sum(1 for c in self.candidates if c.point not in self.results)
        if runner is None and len(self.results) == 1 and untried:  # nothing else measured: nothing beaten yet
            words = f"low: the only configuration launched ({fmt_int(untried)} of the space not launched)"
        elif margin > self.noise:
            words = f"high: {margin:.1%} ahead of the next best, above the benchmark's noise (~{self.noise:.0%})" \
                if runner else "high: no other configuration meets the SLO"
        elif runner is not None and repeats > 1 and len(self.results[runner]) > 1:
            words = (f"low: {margin:.1%} ahead of {point_label(runner)} after {fmt_int(repeats)} launches each, within "
                     f"the noise (~{self.noise:.0%}); either is as good")
        else:
            words = f"low: {margin:.1%} ahead of {point_label(runner) if runner else '-'}, within the noise"
        if runner is not None and repeats > 1 and len(self.results[runner]) > 1:  # repeated: intervals over launches
            words += f"; {self.interval_words(best, runner)}"
        return Standing(best, value, level, runner, margin, words)

    def interval_words(self, best: Point, runner: Point) -> str:
        """The choice against the runner-up with 95 % intervals over their launches' goodput (a launch each: says
        how many would tell)."""
        def per_launch(p: Point) -> list[float]:
            return [objective(r.levels, self.slo)[0] for r in self.results.get(p, []) if not r.failed]

        return compare_samples("goodput", point_label(best), per_launch(best), point_label(runner), per_launch(runner),
                               over="launches").text

    def repeat_wanted(self) -> list[Point]:
        """The incumbent and runner-up when they are within the noise and not yet launched twice each."""
        standing = self.standing()
        if standing is None or standing.runner_up is None or standing.margin > self.noise:
            return []
        return [p for p in (standing.point, standing.runner_up) if len(self.results[p]) < 2]

    # ------------------------------------------------------------------ the model

    def _fits(self, pending: Sequence[Vector] = ()) -> dict[tuple[int, str], GpFit]:
        """One fit per (level, figure). Launches on their way count as measured at the model's own prediction
        (so two hosts are not sent to the same region at once)."""
        data: dict[tuple[int, str], tuple[list[Vector], list[float]]] = {}
        for point, runs in self.results.items():
            x = self._coords.get(point)
            if x is None:
                continue
            for r in runs:
                if r.failed:
                    continue
                for lv in r.levels:
                    for name, value in (("tok", lv.tok_s), ("ttft", lv.ttft_p99_ms), ("itl", lv.itl_p99_ms)):
                        if value is not None and value > 0:
                            xs, ys = data.setdefault((lv.concurrency, name), ([], []))
                            xs.append(x)
                            ys.append(math.log(value))
        gp = Gp()
        fits = {key: gp.fit(xs, ys) for key, (xs, ys) in data.items()}
        if not pending:
            return fits
        for key, fit in fits.items():
            xs, ys = data[key]
            fits[key] = gp.fit([*xs, *pending], [*ys, *(fit.predict(x)[0] for x in pending)])
        return fits

    def _predict(self, fits: dict[tuple[int, str], GpFit], x: Vector, kappa: float) -> tuple[float, int | None]:
        best: tuple[float, int | None] = (0.0, None)
        for c in self.levels:
            tok = fits.get((c, "tok"))
            if tok is None:
                continue
            mu, sd = tok.predict(x)
            ok = True
            for name, limit in (("ttft", self.slo.ttft_p99_ms), ("itl", self.slo.itl_p99_ms)):
                fit = fits.get((c, name))
                if limit is not None and fit is not None:
                    lm, ls = fit.predict(x)
                    # one launch measures the latency once, with the benchmark's scatter on top of what the
                    # model does not know: a prediction just over the limit may well measure under it
                    spread = math.sqrt(ls * ls + self.noise * self.noise)
                    ok = ok and math.exp(lm - kappa * spread) <= limit
            value = math.exp(mu + kappa * sd)
            if ok and value > best[0]:
                best = (value, c)
        return best

    def propose(self, pending: Collection[Point] = ()) -> Proposal | None:
        """The next candidate to launch, or None when none could beat the incumbent by more than the noise."""
        open_ = [c for c in self.candidates if c.point not in self.results and c.point not in pending
                 and self.failed_like(c.point) is None]
        if not open_:
            return None
        if not any(not r.failed for runs in self.results.values() for r in runs):
            first = self._first(open_, pending)
            return Proposal(first, "nothing measured yet: the middle of the space first", 0.0, math.inf)
        fits = self._fits([self._coords[p] for p in pending if p in self._coords])
        failing = self._failure_fit()
        standing = self.standing()
        incumbent = standing.goodput if standing else 0.0
        scored = []
        for c in open_:
            x = self._coords[c.point]
            risk = self.failure_risk(c.point, failing)
            if risk > FAIL_LIKELY:
                continue  # predicted to fail like its neighbours: costs no launch
            optimistic, level = self._predict(fits, x, KAPPA)
            expected, _ = self._predict(fits, x, 0.0)
            promising, _ = self._predict(fits, x, KAPPA_CHOOSE)
            scored.append((promising * (1.0 - risk), optimistic, expected, level, c))
        # go on while any candidate not predicted to fail might beat the best by more than the noise; among
        # them launch the one with the most to gain, discounted by its chance of failing to start
        hopeful = [s for s in scored if s[1] > incumbent * (1.0 + self.noise)]
        if not hopeful:
            return None
        _, optimistic, expected, level, best = max(hopeful, key=lambda s: s[0])
        at = f" at c={level}" if level is not None else ""
        why = (f"could reach {optimistic:,.0f} tok/s{at} (expected {expected:,.0f}; best so far {incumbent:,.0f})")
        return Proposal(best, why, expected, optimistic)

    def _failure_fit(self) -> GpFit | None:
        """Where starts fail: a smooth model of failed (1) / started (0) over the launches so far."""
        xs: list[Vector] = []
        ys: list[float] = []
        for point, runs in self.results.items():
            if point in self._coords:
                xs.append(self._coords[point])
                ys.append(1.0 if all(r.failed and r.failure_kind is not FailureKind.OTHER for r in runs) else 0.0)
        if not any(ys):
            return None
        return Gp(lengths=(0.25,), min_scale=0.5).fit(xs, ys)

    def failure_risk(self, point: Point, fit: GpFit | None = None) -> float:
        """0..1: how likely a start of `point` fails for memory or capture (1 inside a known failure region)."""
        if self.failed_like(point) is not None:
            return 1.0
        if fit is None:
            return 0.0
        return min(max(fit.predict(self._coords[point])[0], 0.0), 1.0)

    def _first(self, open_: Sequence[Candidate], pending: Collection[Point]) -> Candidate:
        """Nothing measured: the candidate nearest the middle, then (hosts in parallel) the farthest from those
        already on their way."""
        taken = [self._coords[p] for p in pending if p in self._coords]
        if not taken:
            centre = tuple(0.5 for _ in self.space)
            return min(open_, key=lambda c: _dist(self._coords[c.point], centre))
        return max(open_, key=lambda c: min(_dist(self._coords[c.point], t) for t in taken))

    def predicted_failures(self) -> list[tuple[Candidate, LaunchResult | None]]:
        """Candidates not launched because they are predicted to fail: inside a failed neighbour's region (with
        that launch), or where the failure model says a start likely fails (None)."""
        out: list[tuple[Candidate, LaunchResult | None]] = []
        fit = self._failure_fit()
        for c in self.candidates:
            if c.point in self.results:
                continue
            like = self.failed_like(c.point)
            if like is not None or self.failure_risk(c.point, fit) > FAIL_LIKELY:
                out.append((c, like))
        return out

    def meets_at(self, point: Point, concurrency: int) -> bool:
        return any(not r.failed and (lv := r.level(concurrency)) is not None and meets(lv, self.slo)
                   for r in self.results.get(point, []))


def _dist(a: Vector, b: Vector) -> float:
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
