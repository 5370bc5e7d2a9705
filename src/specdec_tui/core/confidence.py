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
        return Verdict(None, "no interval: one sample each cannot tell a difference from noise (repeat the runs)", 3)
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
