"""How a sweep scores a setting, picks a winner and decides to stop — pure, so the choice can be explained.

The robust choice follows vLLM's speculative-K tuner: median over repeats, reject noisy settings
(relative MAD > 0.1), conservative score median − 1.4826·MAD, and prefer the smallest value within 1% of
the best (fewer draft steps cost less memory: the seed's max_running_requests fell 26 → 21 → 17).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from specdec_tui.core.confidence import (
    DEFAULT_RUN_NOISE,
    EQUAL,
    Verdict,
    compare_samples,
    measured_run_noise,
    repeats_words,
)
from specdec_tui.core.latency import queue_note
from specdec_tui.core.number_format import fmt_fixed, fmt_int
from specdec_tui.core.session import Trial

ObjectiveKind = Literal["c1_floor", "throughput", "weighted"]

MAD_SCALE = 1.4826  # makes MAD a consistent estimator of the standard deviation for normal noise
NOISE_LIMIT = 0.10  # relative MAD above which a setting's figures are too noisy to trust
NEAR_BEST = 0.01  # within 1 % of the best, the smaller value wins


@dataclass(frozen=True, slots=True)
class Objective:
    """What "best" means. Default: tok/s at the lowest concurrency, provided the highest concurrency keeps
    at least `floor_ratio` of the baseline's (first value's) throughput."""

    kind: ObjectiveKind = "c1_floor"
    concurrency: int | None = None  # for "throughput": the concurrency to maximise
    floor_ratio: float = 0.5  # for "c1_floor"
    weights: tuple[tuple[int, float], ...] = ()  # for "weighted": (concurrency, weight) pairs

    def describe(self) -> str:
        if self.kind == "throughput":
            return f"output tok/s at concurrency {self.concurrency}"
        if self.kind == "weighted":
            mix = " + ".join(f"{w:g}×tok/s@c={c}" for c, w in self.weights)
            return f"weighted mix: {mix}"
        return (f"tok/s at the lowest concurrency, with the highest concurrency's throughput kept ≥ "
                f"{self.floor_ratio:.0%} of the baseline's")


def level_tok_s(trial: Trial, concurrency: int) -> float | None:
    lv = trial.level(concurrency)
    return lv.output_tok_s if lv and lv.requests > lv.errors else None


def score(trial: Trial, objective: Objective) -> float | None:
    """The trial's figure under the objective (before the floor check); None when it has no such figure."""
    if trial.status != "ok" or not trial.levels:
        return None
    cs = sorted(lv.concurrency for lv in trial.levels)
    if objective.kind == "throughput":
        return level_tok_s(trial, objective.concurrency or cs[-1])
    if objective.kind == "weighted":
        total = 0.0
        for c, w in objective.weights:
            value = level_tok_s(trial, c)
            if value is None:
                return None
            total += w * value
        return total
    return level_tok_s(trial, cs[0])


@dataclass(slots=True)
class ValueStats:
    """One swept value over its repeats."""

    value: str
    scores: list[float]
    high_c_tok_s: list[float] = field(default_factory=list)
    max_running_requests: int | None = None
    failed: int = 0
    high_c: int | None = None  # the highest concurrency its runs measured
    high_c_ttft_p99_ms: list[float] = field(default_factory=list)
    median: float | None = None
    mad: float | None = None
    conservative: float | None = None
    rejected: str = ""  # why it cannot win, in words; "" when it can

    @property
    def relative_mad(self) -> float | None:
        if self.median in (None, 0) or self.mad is None:
            return None
        return self.mad / self.median


@dataclass(slots=True)
class SweepChoice:
    winner: ValueStats | None
    stats: list[ValueStats]
    reasons: list[str]
    confidence: Verdict | None = None  # the winner against the runner-up, with intervals (None: nothing to compare)
    runner_up: str | None = None  # the value the winner was compared with
    repeats_needed: int | None = None  # repeats per value that would tell them apart (when they were not)

    @property
    def clear(self) -> bool:
        """A winner whose 95 % interval excludes the runner-up's (or no runner-up to be confused with): only then
        "★ winner" and "Apply the winner?"; otherwise the best value is a pick within the noise."""
        return self.winner is not None and (self.confidence is None or self.confidence.winner is not None)

    def unclear_words(self) -> str:
        """"no clear difference from 2; about 6 repeats each would tell" ("" for a clear winner or none)."""
        if self.winner is None or self.clear:
            return ""
        more = (f"; {repeats_words(self.repeats_needed)} repeats each would tell" if self.repeats_needed
                else f"; {EQUAL}" if self.confidence is not None and self.confidence.equal
                else "; no interval to tell them apart")
        return f"no clear difference from {self.runner_up}{more}"

    def mark(self, value: str) -> str:
        """The verdict cell of a swept value: "★ winner", "pick: no clear difference (…)" or ""."""
        if self.winner is None or value != self.winner.value:
            return ""
        if self.clear:
            return "★ winner"
        more = (f", {repeats_words(self.repeats_needed)} repeats would tell" if self.repeats_needed
                else f", {EQUAL}" if self.confidence is not None and self.confidence.equal else "")
        return f"pick: no clear difference{more}"

    def headline(self, flag: str) -> str:
        """"Winner: steps 3" only when its interval excludes the runner-up's; else "Pick: steps 3 (no clear
        difference from 2; about N repeats each would tell)" — the CLI's and the panel's first line."""
        if self.winner is None:
            return "No winner."
        if self.clear:
            return f"Winner: {flag} {self.winner.value}"
        return f"Pick: {flag} {self.winner.value} ({self.unclear_words()})"


def _value_key(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def summarise(trials_by_value: Mapping[str, Sequence[Trial]], objective: Objective) -> list[ValueStats]:
    out = []
    for value, trials in trials_by_value.items():
        ok = [t for t in trials if t.status == "ok"]
        scores = [s for t in ok if (s := score(t, objective)) is not None]
        high, high_ttft, high_c = [], [], None
        for t in ok:
            cs = sorted(lv.concurrency for lv in t.levels)
            if cs and (v := level_tok_s(t, cs[-1])) is not None:
                high.append(v)
                high_c = cs[-1]
                if (p99 := t.level(cs[-1]).ttft_ms.p99) is not None:  # type: ignore[union-attr]
                    high_ttft.append(p99)
        mrr = next((t.facts.max_running_requests for t in ok if t.facts and t.facts.max_running_requests), None)
        stats = ValueStats(value=value, scores=scores, high_c_tok_s=high, max_running_requests=mrr,
                           failed=len(trials) - len(ok), high_c=high_c, high_c_ttft_p99_ms=high_ttft)
        if scores:
            stats.median = statistics.median(scores)
            stats.mad = statistics.median(abs(s - stats.median) for s in scores)
            stats.conservative = stats.median - MAD_SCALE * stats.mad
        out.append(stats)
    return out


def choose(trials_by_value: Mapping[str, Sequence[Trial]], objective: Objective = Objective()) -> SweepChoice:
    """Pick the winning value and say why, in words the operator can check."""
    stats = summarise(trials_by_value, objective)
    reasons: list[str] = [f"objective: {objective.describe()}"]
    baseline_high = next((statistics.median(s.high_c_tok_s) for s in stats if s.high_c_tok_s), None)
    for s in stats:
        if s.median is None:
            s.rejected = "no successful run" if s.failed else "no figure for the objective"
        elif (rel := s.relative_mad) is not None and rel > NOISE_LIMIT:
            s.rejected = f"too noisy (relative MAD {rel:.0%} > {NOISE_LIMIT:.0%})"
        elif (objective.kind == "c1_floor" and baseline_high and s.high_c_tok_s
              and statistics.median(s.high_c_tok_s) < objective.floor_ratio * baseline_high):
            s.rejected = (f"throughput at the highest concurrency {statistics.median(s.high_c_tok_s):.0f} tok/s is "
                          f"below the floor {objective.floor_ratio * baseline_high:.0f} tok/s")
    candidates = [s for s in stats if not s.rejected]
    reasons.extend(score_lines(stats))
    for s in stats:
        if s.rejected:
            reasons.append(f"{s.value}: rejected — {s.rejected}")
    if not candidates:
        reasons.append("no value qualifies")
        return SweepChoice(None, stats, reasons)
    best = max(candidates, key=lambda s: s.conservative or 0.0)
    threshold = (best.conservative or 0.0) * (1 - NEAR_BEST)
    near = sorted((s for s in candidates if (s.conservative or 0.0) >= threshold), key=lambda s: _value_key(s.value))
    winner = near[0]
    how = (f"median {best.median:.1f} − 1.4826 × MAD {best.mad:.1f}" if len(best.scores) > 1
           else spread_words(best))  # one run's MAD is 0.0: no formula that pretends to have measured it
    reasons.append(f"best conservative score: {best.value} at {best.conservative:.1f} ({how})")
    confidence = winner_confidence(winner, candidates, trials_by_value, objective)
    # "wins" only for a clear winner (SweepChoice.clear): within the noise it is the pick, as the headline says
    wins = "wins" if confidence is None or confidence.winner is not None else "is the pick"
    if winner is not best:
        reasons.append(f"{winner.value} is within 1% of it ({winner.conservative:.1f}) and smaller, so it {wins}")
    else:
        reasons.append(f"{winner.value} {wins}")
    if confidence is not None:
        reasons.append(f"confidence: {confidence.text}")
    if (cost := high_c_cost(winner, stats)) is not None:
        reasons.append(cost)
    runner = _runner_up(winner, candidates)
    return SweepChoice(winner, stats, reasons, confidence, runner.value if runner else None,
                       _repeats_needed(confidence, winner, runner, trials_by_value, objective))


def _runner_up(winner: ValueStats, candidates: Sequence[ValueStats]) -> ValueStats | None:
    others = [s for s in candidates if s is not winner]
    return max(others, key=lambda s: s.conservative or 0.0) if others else None


def _repeats_needed(v: Verdict | None, winner: ValueStats, runner: ValueStats | None,
                    trials_by_value: Mapping[str, Sequence[Trial]], objective: Objective) -> int | None:
    """How many repeats per value would tell the pick from the runner-up: the verdict's estimate, which counts
    requests when the intervals were over requests (then divided by the requests one run measures)."""
    if v is None or v.winner is not None or not v.samples_needed or runner is None:
        return None
    if v.counts == "repeats":  # over repeats, or within the run-to-run noise: the count is of repeats already
        return max(v.samples_needed, 2)
    runs = sum(1 for t in trials_by_value[winner.value] if t.status == "ok") or 1
    per_run = max(1, len(_request_samples(trials_by_value[winner.value], objective)) // runs)
    return max(2, math.ceil(v.samples_needed / per_run))


def winner_confidence(winner: ValueStats, candidates: Sequence[ValueStats],
                      trials_by_value: Mapping[str, Sequence[Trial]], objective: Objective) -> Verdict | None:
    """The winner against the best other candidate, with 95 % intervals (core.confidence): over repeats when each
    ran at least twice, else over the requests of the level the objective reads (per-request tok/s), widened by the
    run-to-run noise the sweep's own repeated values measured (else the default)."""
    runner = _runner_up(winner, candidates)
    if runner is None:
        return None
    a, b = f"value {winner.value}", f"value {runner.value}"
    if len(winner.scores) >= 2 and len(runner.scores) >= 2:
        return compare_samples("the objective's score", a, winner.scores, b, runner.scores, unit=" tok/s",
                               over="repeats")
    noise = measured_run_noise(s.scores for s in candidates) or DEFAULT_RUN_NOISE
    return compare_samples("per-request tok/s", a, _request_samples(trials_by_value[winner.value], objective), b,
                           _request_samples(trials_by_value[runner.value], objective), unit=" tok/s", noise=noise)


def _request_samples(trials: Sequence[Trial], objective: Objective) -> list[float]:
    """Per-request tok/s of the level the objective reads, over the value's successful runs."""
    out: list[float] = []
    for t in trials:
        if t.status != "ok" or not t.levels:
            continue
        cs = sorted(lv.concurrency for lv in t.levels)
        c = (objective.concurrency or cs[-1]) if objective.kind == "throughput" else cs[0]
        if (lv := t.level(c)) is not None:
            out.extend(lv.tok_s_samples)
    return out


def spread_words(s: ValueStats) -> str:
    """"MAD 1.8 over 3 runs", or "1 run: noise not measured" (one run's MAD is 0.0 by construction)."""
    if len(s.scores) < 2:
        return "1 run: noise not measured"
    return f"MAD {fmt_fixed(s.mad)} over {fmt_int(len(s.scores))} runs"


def score_lines(stats: Sequence[ValueStats]) -> list[str]:
    """Each value's score and spread on one line (a sweep of many values stays short); when no value ran
    twice, that the noise was not measured at all."""
    scored = [s for s in stats if s.median is not None]
    if not scored:
        return []
    if all(len(s.scores) < 2 for s in scored):
        return ["1 run each: noise not measured (3 repeats tell a real difference from noise)",
                "scores: " + " · ".join(f"{s.value}: {fmt_fixed(s.conservative)}" for s in scored)]
    return ["scores (median, spread): " + " · ".join(
        f"{s.value}: {fmt_fixed(s.conservative)} ({fmt_fixed(s.median)}, {spread_words(s)})" for s in scored)]


def _ms_words(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def high_c_cost(winner: ValueStats, stats: Sequence[ValueStats]) -> str | None:
    """What the winner costs at the highest concurrency: its tok/s there against the best value there,
    and its TTFT p99 (whether requests queue there, by its server's max running requests)."""
    if winner.high_c is None or not winner.high_c_tok_s:
        return None
    at = winner.high_c
    mine = statistics.median(winner.high_c_tok_s)
    others = [(statistics.median(s.high_c_tok_s), s) for s in stats if s.high_c == at and s.high_c_tok_s]
    best_tok_s, best = max(others, key=lambda pair: pair[0])
    ttft = (f", TTFT p99 {_ms_words(statistics.median(winner.high_c_ttft_p99_ms))}"
            if winner.high_c_ttft_p99_ms else "")
    queues = (f" ({queue_note(winner.max_running_requests)})"
              if winner.max_running_requests is not None and at > winner.max_running_requests else "")
    if best is winner or best_tok_s <= mine:
        return f"at c={at} the winner is also the fastest: {fmt_fixed(mine)} tok/s{ttft}{queues}"
    loss = (mine - best_tok_s) / best_tok_s * 100
    return (f"cost at c={at}: {fmt_fixed(mine)} tok/s against {fmt_fixed(best_tok_s)} for {best.value} ({loss:+.1f}%)"
            f"{ttft}{queues}")


def stop_reason(history: Sequence[ValueStats], *, min_running_requests: int | None = None) -> str | None:
    """Why the sweep should stop after the values so far, or None to go on.

    Stops after two consecutive values that got worse than the one before, or when a value's
    max_running_requests fell below the configured floor (the seed's capacity trade-off)."""
    last = history[-1] if history else None
    if last and min_running_requests is not None and last.max_running_requests is not None \
            and last.max_running_requests < min_running_requests:
        return (f"max_running_requests fell to {last.max_running_requests} at {last.value}, "
                f"below the floor of {min_running_requests}")
    medians = [s.median for s in history if s.median is not None]
    if len(medians) >= 3 and medians[-1] < medians[-2] < medians[-3]:
        return "two consecutive values got worse"
    return None


# ---------------------------------------------------------------------------------------------- curves


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One swept value on the trade-off curves: speed of one request at the lowest concurrency,
    the server's capacity (max_running_requests) and throughput at the highest concurrency — medians
    over the value's successful repeats."""

    value: str
    ok: int
    failed: int
    low_c: int | None = None
    per_request_tok_s: float | None = None  # median of the per-request p50 at the lowest concurrency
    low_c_tok_s: float | None = None  # aggregate output tok/s at the lowest concurrency
    max_running_requests: int | None = None
    high_c: int | None = None
    high_c_tok_s: float | None = None
    accept_length: float | None = None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def curve(trials_by_value: Mapping[str, Sequence[Trial]]) -> list[CurvePoint]:
    """The curves the operator of the seed drew by hand, one point per value in sweep order."""
    points = []
    for value, trials in trials_by_value.items():
        ok = [t for t in trials if t.status == "ok" and t.levels]
        cs = sorted({lv.concurrency for t in ok for lv in t.levels})
        low, high = (cs[0], cs[-1]) if cs else (None, None)
        low_levels = [lv for t in ok if low is not None and (lv := t.level(low))]
        points.append(CurvePoint(
            value=value,
            ok=len(ok),
            failed=sum(1 for t in trials if t.status == "failed"),
            low_c=low,
            per_request_tok_s=_median([lv.per_request_tok_s.p50 for lv in low_levels
                                       if lv.per_request_tok_s.p50 is not None]),
            low_c_tok_s=_median([lv.output_tok_s for lv in low_levels]),
            max_running_requests=next((t.facts.max_running_requests for t in ok
                                       if t.facts and t.facts.max_running_requests), None),
            high_c=high,
            high_c_tok_s=_median([v for t in ok if high is not None and (v := level_tok_s(t, high)) is not None]),
            accept_length=_median([a for lv in low_levels
                                   if (a := lv.accept_length_server or lv.accept_length_client)]),
        ))
    return points
