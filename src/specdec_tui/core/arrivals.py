"""When open-loop requests are sent: offsets (s) from the level's start for a target rate.

Poisson: `n` arrivals of a Poisson process at `rate` conditioned on their count — uniform times over
[0, n/rate], sorted — so a fixed-count level has exponential gaps and yet a mean rate on target, not one
drifting by ±1/sqrt(n). Constant: one every 1/rate. A burst factor b sends requests b at a time, the bursts
at rate/b, so the mean rate is unchanged and only the clumping grows.
"""

from __future__ import annotations

import math
import random
from enum import StrEnum


class ArrivalKind(StrEnum):
    POISSON = "poisson"
    CONSTANT = "constant"


def arrival_offsets(n: int, rate: float, kind: ArrivalKind | str, *, burst: float = 1.0, seed: int = 0) -> list[float]:
    """`n` send times in seconds from 0, ascending."""
    if n <= 0:
        return []
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError("the request rate must be a number > 0")
    b = max(1, round(burst))
    groups = -(-n // b)
    span = groups * b / rate
    if ArrivalKind(kind) is ArrivalKind.CONSTANT:
        starts = [g * b / rate for g in range(groups)]
    else:
        rng = random.Random(seed)
        starts = sorted(rng.uniform(0.0, span) for _ in range(groups))
        first = starts[0]
        starts = [s - first for s in starts]  # the level starts with its first request, not an idle gap
    return [starts[i // b] for i in range(n)]
