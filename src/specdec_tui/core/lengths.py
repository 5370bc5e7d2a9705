"""Length distributions for a workload's input and output lengths: "fixed:N", "uniform:A:B",
"lognormal:MEDIAN:SIGMA" (clipped to [1, 32768]); "" means the workload's own (or the profile's max_tokens)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum

MAX_LEN = 32768


class LengthKind(StrEnum):
    FIXED = "fixed"
    UNIFORM = "uniform"
    LOGNORMAL = "lognormal"


@dataclass(frozen=True, slots=True)
class LengthDist:
    kind: LengthKind
    a: float
    b: float = 0.0

    def draw(self, rng: random.Random) -> int:
        if self.kind is LengthKind.FIXED:
            v = self.a
        elif self.kind is LengthKind.UNIFORM:
            v = rng.randint(int(self.a), int(self.b))
        else:
            v = rng.lognormvariate(math.log(self.a), self.b)
        return max(1, min(MAX_LEN, round(v)))


def parse_length(spec: str) -> LengthDist | None:
    """The distribution `spec` names, None for ""; ValueError in words otherwise."""
    if not spec.strip():
        return None
    name, *nums = spec.strip().split(":")
    try:
        kind = LengthKind(name)
        values = [float(x) for x in nums]
    except ValueError:
        raise ValueError(f"length {spec!r}: expected fixed:N, uniform:A:B or lognormal:MEDIAN:SIGMA") from None
    want = 1 if kind is LengthKind.FIXED else 2
    if len(values) != want or any(v < 0 or not math.isfinite(v) for v in values):
        raise ValueError(f"length {spec!r}: {kind.value} takes {want} number(s) ≥ 0")
    if kind is LengthKind.UNIFORM and values[0] > values[1]:
        raise ValueError(f"length {spec!r}: uniform A:B needs A ≤ B")
    if kind is not LengthKind.UNIFORM and values[0] < 1:
        raise ValueError(f"length {spec!r}: the length must be ≥ 1")
    return LengthDist(kind, *values)


def fit_words(text: str, words: int) -> str:
    """`text` cut or extended (by repeating its own words) to `words` words: a synthetic input length."""
    parts = text.split() or ["hello"]
    reps = -(-words // len(parts))
    return " ".join((parts * reps)[:words])
