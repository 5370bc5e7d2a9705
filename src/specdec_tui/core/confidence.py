"""Confidence for comparisons: percentile-bootstrap intervals (over a level's requests, or a setting's repeats)
and the verdict a comparison may draw from them — a winner only when the intervals separate, otherwise "no clear
difference" with an estimate of how many samples would tell (interval widths shrink as 1/sqrt(n))."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BOOTSTRAP_ROUNDS = 1000
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    lo: float
    hi: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    def text(self, fmt: str = "{:.1f}") -> str:
        return f"{fmt.format(self.estimate)} [{fmt.format(self.lo)}–{fmt.format(self.hi)}]"


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


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
        return Verdict(None, "no clear difference (the same figure)")
    need = math.ceil(max(a.n, b.n) * (spread / diff) ** 2)
    return Verdict(None, f"no clear difference: the 95 % intervals overlap; about {need} samples each would tell "
                         f"a {diff:.3g}{unit} difference", need)



def compare_samples(what: str, a_name: str, a_values: Sequence[float], b_name: str, b_values: Sequence[float], *,
                    unit: str = "", over: str = "requests", higher_is_better: bool = True) -> Verdict:
    """The one wording of a comparison with intervals, for every view that compares (compare, sweep, tune, replay,
    the reports): "per-request tok/s A 41.2 [39.8–42.5] vs B 44.0 [42.9–45.1] (over requests): B is better than A
    (95 % intervals separate)", or "…: no clear difference: …; about N requests each would tell …"."""
    if not a_values or not b_values:  # a level saved before intervals existed, or one that measured nothing
        return Verdict(None, f"{what}: no interval ({a_name if not a_values else b_name} kept no per-{over[:-1]} figures)")
    ia, ib = bootstrap(a_values), bootstrap(b_values)
    v = verdict(a_name, ia, b_name, ib, higher_is_better=higher_is_better, unit=unit)
    if ia is None or ib is None:
        return Verdict(None, f"{what}: {v.text}", v.samples_needed)
    text = f"{what} {a_name} {ia.text()} vs {b_name} {ib.text()} (over {over}): {v.text}"
    return Verdict(v.winner, text.replace("samples each", f"{over} each"), v.samples_needed)
