"""Confidence for comparisons: percentile-bootstrap intervals (over a level's requests, or a setting's repeats)
and the verdict a comparison may draw from them — a winner only when the intervals separate, otherwise "no clear
difference" with an estimate of how many samples would tell (interval widths shrink as 1/sqrt(n)).

An interval over one run's requests misses the scatter between runs of one configuration (restart, warm-up, the
machine), so it is widened by a run-to-run noise floor: the session's own repeats of one configuration when it has
them (`measured_run_noise`), else `DEFAULT_RUN_NOISE`, the one owner of that figure (the tuner reads it too)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from specdec_tui.core.number_format import fmt_fixed, fmt_int, fmt_sig

BOOTSTRAP_ROUNDS = 1000
LEVEL = 0.95
TRIM = 0.2  # share of each end a per-request interval leaves out (Wilcox's usual 20 % trimmed mean)
MANY_REPEATS = 99  # above this, "about 42642 repeats" reads as false precision: "more than 99"
Z_95 = 1.96  # a normal's two-sided 95 % quantile: the run noise's share of an interval's half-width
RUN_NOISE = 0.03  # one run's relative standard deviation on one configuration, when the session measured none
# (bench/run_noise.py on the simulator at 25×, 2026-12-05, a loaded 2-core machine: one run's c=1 figure scattered
# ±2.0 % over 80 runs, ±2.6 % over 40; 3 % keeps a margin over both)


@dataclass(frozen=True, slots=True)
class RunNoise:
    """Run-to-run scatter of one run's figure on one configuration: a relative standard deviation, and its source."""
    rel: float
    source: str  # "the default" or "measured over N repeats in this session"

    @property
    def words(self) -> str:
        """"±3 %, the default" — how the verdict names the floor it used."""
        pct = f"{self.rel * 100:.1f}".removesuffix(".0")
        return f"±{pct} %, {self.source}"


DEFAULT_RUN_NOISE = RunNoise(RUN_NOISE, "the default")


def measured_run_noise(groups: Iterable[Sequence[float]]) -> RunNoise | None:
    """The pooled relative standard deviation of runs of one configuration (each group: one configuration's
    per-run figures); None when no configuration ran twice."""
    squares, dof, runs = 0.0, 0, 0
    for g in groups:
        xs = [x for x in g if x > 0]
        if len(xs) < 2:
            continue
        m = _mean(xs)
        squares += math.fsum((x / m - 1) ** 2 for x in xs)
        dof += len(xs) - 1
        runs += len(xs)
    if dof == 0:
        return None
    return RunNoise(math.sqrt(squares / dof), f"measured over {fmt_int(runs)} repeats in this session")


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    lo: float
    hi: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    def text(self, digits: int = 1) -> str:
        """"5,045.3 [4,980.0–5,110.6]": numbers in words are written by core.number_format, separators and all."""
        return f"{fmt_fixed(self.estimate, digits)} [{fmt_fixed(self.lo, digits)}–{fmt_fixed(self.hi, digits)}]"

    def widened(self, noise: RunNoise) -> Interval:
        """This interval over one run's requests with the run-to-run scatter added in quadrature to each side
        (`noise_half_width`)."""
        extra = noise_half_width(noise, self.estimate, 1)
        lo = self.estimate - math.hypot(self.estimate - self.lo, extra)
        hi = self.estimate + math.hypot(self.hi - self.estimate, extra)
        return Interval(self.estimate, lo, hi, self.n)

    def floored(self, noise: RunNoise) -> Interval:
        """This interval over `n` repeats, no narrower than the run noise allows for n repeats: a bootstrap over
        two or three values is far too narrow (it has seen almost none of the scatter)."""
        extra = noise_half_width(noise, self.estimate, self.n)
        return Interval(self.estimate, min(self.lo, self.estimate - extra), max(self.hi, self.estimate + extra), self.n)


def noise_half_width(noise: RunNoise, estimate: float, runs: int) -> float:
    """Each side's share of the run noise in a comparison of two: 1.96 × rel × |estimate| / sqrt(2 × runs). Two
    sides' shares add (the intervals must not overlap) to 1.96 × sqrt(2) × rel / sqrt(runs) — the 95 % band of a
    difference of two means of `runs` runs each — so the floor makes the noise part of the rule a 95 % test, not
    the ~99.5 % one two full-width intervals would make it."""
    return Z_95 * noise.rel * abs(estimate) / math.sqrt(2 * max(1, runs))


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def trimmed_mean(xs: Sequence[float]) -> float:
    """The mean of the middle values, TRIM of each end cut: a few stalled requests' bursts move it little, and it
    keeps most of the mean's efficiency (the median lost a 2× difference over 40 requests of 8 prompt lengths)."""
    s = sorted(xs)
    k = int(len(s) * TRIM)
    return _mean(s[k:len(s) - k] or s)


def bootstrap(values: Sequence[float], stat: Callable[[Sequence[float]], float] = _mean, *, rounds: int = BOOTSTRAP_ROUNDS,
              level: float = LEVEL, seed: int = 0) -> Interval | None:
    """Percentile bootstrap interval of `stat` over `values`; None for fewer than two values (no spread known)."""
    n = len(values)
    if n < 2:
        return None
    rng = random.Random(seed)
    pick = rng.choices
    stats = sorted(stat(pick(values, k=n)) for _ in range(rounds))
    tail = (1 - level) / 2
    lo = stats[min(rounds - 1, int(math.floor(tail * rounds)))]
    hi = stats[min(rounds - 1, int(math.ceil((1 - tail) * rounds)) - 1)]
    return Interval(stat(values), lo, hi, n)


@dataclass(frozen=True, slots=True)
class Verdict:
    winner: str | None  # the name of the better side, None when the intervals overlap
    text: str
    samples_needed: int | None = None  # per side, to separate the intervals at the difference seen
    counts: str = "samples"  # what samples_needed counts: "requests", "repeats", "launches"
    noise: str | None = None  # the run-to-run floor the intervals carry ("±3 %, the default"); None: none
    equal: bool = False  # the figures read the same and no count of repeats would tell them apart (equal_as_shown)


def verdict(a_name: str, a: Interval | None, b_name: str, b: Interval | None, *, higher_is_better: bool = True,
            unit: str = "") -> Verdict:
    """A winner only when the two intervals do not overlap."""
    if a is None or b is None:
        return Verdict(None, "no clear difference: one sample cannot tell a difference from noise (3 repeats would tell)", 3)
    if a.lo > b.hi or b.lo > a.hi:
        a_better = (a.estimate > b.estimate) == higher_is_better
        win, lose = (a_name, b_name) if a_better else (b_name, a_name)
        return Verdict(win, f"{win} is better than {lose} (95 % intervals separate)")
    diff = abs(a.estimate - b.estimate)
    spread = a.half_width + b.half_width
    if diff <= 0 or spread <= 0:
        return Verdict(None, equal_words(a, unit), equal=True) if diff <= 0 else Verdict(
            None, "no clear difference (no spread to judge by)")
    need = math.ceil(max(a.n, b.n) * (spread / diff) ** 2)
    if need > MANY_REPEATS * max(a.n, b.n) and equal_as_shown(a, b):
        return Verdict(None, equal_words(a, unit), equal=True)
    return Verdict(None, f"no clear difference: the 95 % intervals overlap; about {fmt_int(need)} samples each would "
                         f"tell a {fmt_sig(diff)}{unit} difference", need)


def equal_as_shown(a: Interval, b: Interval) -> bool:
    """The two figures read the same as written ("41.2" each, `Interval.text`). With more repeats than anyone runs
    needed to tell them apart, they are equal: two trials of one setting often differ by 0.01 tok/s, and "more than
    99 repeats each would tell a 0.01 tok/s difference" read as if one could."""
    return fmt_fixed(a.estimate, 1) == fmt_fixed(b.estimate, 1)


EQUAL = "the figures are equal: no count of repeats would tell them apart"  # a sweep's pick says it so (sweep_rules)


def repeats_words(need: int) -> str:
    """"about 6", or "more than 99" past MANY_REPEATS (the one wording of a count of repeats: every view's)."""
    return f"about {fmt_int(need)}" if need <= MANY_REPEATS else f"more than {MANY_REPEATS}"


def equal_words(a: Interval, unit: str) -> str:
    return (f"no clear difference: the figures are equal ({fmt_fixed(a.estimate, 1)}{unit} each); no count of repeats "
            "would tell them apart")


def _within_noise(a: Interval, b: Interval, noise: RunNoise, unit: str) -> Verdict:
    """Overlapping intervals that carry the run noise: repeats (not more requests) tell, and each repeat shrinks
    the whole widened interval as 1/sqrt(repeats)."""
    diff = abs(a.estimate - b.estimate)
    need = max(2, math.ceil(((a.half_width + b.half_width) / diff) ** 2)) if diff > 0 else MANY_REPEATS + 1
    if need > MANY_REPEATS and equal_as_shown(a, b):
        return Verdict(None, equal_words(a, unit), equal=True)  # the noise is named once, in the intervals' words
    return Verdict(None, f"no clear difference: within run-to-run noise ({noise.words}); {repeats_words(need)} repeats each "
                         f"would tell a {fmt_sig(diff)}{unit} difference", need, "repeats")


def compare_samples(what: str, a_name: str, a_values: Sequence[float], b_name: str, b_values: Sequence[float], *,
                    unit: str = "", over: str = "requests", higher_is_better: bool = True,
                    noise: RunNoise | None = DEFAULT_RUN_NOISE) -> Verdict:
    """The one wording of a comparison with intervals, for every view that compares (compare, sweep, tune, replay,
    the reports): "per-request tok/s A 41.2 [38.0–44.5] vs B 48.0 [44.9–51.1] (over requests, with run-to-run
    noise ±3 %, the default): B is better than A (95 % intervals separate)", or "…: no clear difference: within
    run-to-run noise (±3 %, the default); about N repeats each would tell …". Intervals over one run's requests
    are of the 20 % trimmed mean (robust to a stalled request's burst) and widened by `noise`; intervals over repeats or
    launches (of the mean) are kept no narrower than `noise` allows for their count (None: neither — the samples'
    own spread alone)."""
    if not a_values or not b_values:  # a level saved before intervals existed, or one that measured nothing
        return Verdict(None, f"{what}: no interval ({a_name if not a_values else b_name} kept no per-{over[:-1]} figures)")
    stat = trimmed_mean if over == "requests" else _mean  # per-request figures are heavy-tailed: a client that
    # stalls reads a request's tokens at once (100× its tok/s), and two such requests moved a mean past the runner-up
    ia, ib = bootstrap(a_values, stat), bootstrap(b_values, stat)
    floor = noise
    if floor is not None and ia is not None and ib is not None:
        ia, ib = (ia.widened(floor), ib.widened(floor)) if over == "requests" else (ia.floored(floor), ib.floored(floor))
    v = verdict(a_name, ia, b_name, ib, higher_is_better=higher_is_better, unit=unit)
    if ia is None or ib is None:
        return Verdict(None, f"{what}: {v.text}", v.samples_needed, "repeats")
    if floor is not None and v.winner is None and over == "requests":
        v = _within_noise(ia, ib, floor, unit)
    how = f"over {over}, with run-to-run noise {floor.words}" if floor is not None else f"over {over}"
    text = f"{what} {a_name} {ia.text()} vs {b_name} {ib.text()} ({how}): {v.text}"
    return Verdict(v.winner, text.replace("samples each", f"{over} each"), v.samples_needed,
                   v.counts if v.counts != "samples" else over, floor.words if floor is not None else None, v.equal)
