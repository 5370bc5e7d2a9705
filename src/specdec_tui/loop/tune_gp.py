"""A small Gaussian process (RBF kernel, constant mean) in plain Python: the tuner fits a few dozen points, so a
Cholesky of at most ~30×30 costs nothing and needs no numerical library."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Vector = tuple[float, ...]
MIN_POINTS_TO_FIT_LENGTH = 6


def _kernel(a: Vector, b: Vector, length: float) -> float:
    d2 = sum((x - y) ** 2 for x, y in zip(a, b, strict=True))
    return math.exp(-0.5 * d2 / (length * length))


def _cholesky(m: list[list[float]]) -> list[list[float]]:
    n = len(m)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = m[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            low[i][j] = math.sqrt(max(s, 1e-12)) if i == j else s / low[j][j]
    return low


def _solve_lower(low: list[list[float]], b: Sequence[float]) -> list[float]:
    x: list[float] = []
    for i, row in enumerate(low):
        x.append((b[i] - sum(row[k] * x[k] for k in range(i))) / row[i])
    return x


def _solve_upper_t(low: list[list[float]], b: Sequence[float]) -> list[float]:
    n = len(low)
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


@dataclass(slots=True)
class Gp:
    """Fit on (x, y); `predict(x)` → (mean, standard deviation). `scale` is the prior's standard deviation in
    y's units (never below `min_scale`, so two equal points still leave the rest of the space uncertain)."""

    length: float = 0.25  # until there are MIN_POINTS_TO_FIT_LENGTH points, or when `lengths` is empty
    lengths: tuple[float, ...] = (0.15, 0.25, 0.4, 0.6, 1.0)  # tried on every fit; the likeliest is kept
    noise: float = 0.02  # as a share of the prior variance: the benchmark's own scatter
    min_scale: float = 0.25

    def fit(self, xs: Sequence[Vector], ys: Sequence[float]) -> GpFit:
        """The fit whose length scale explains the data best (log marginal likelihood), so a smooth surface is
        trusted further from its points than a rough one."""
        mean = sum(ys) / len(ys)
        var = sum((y - mean) ** 2 for y in ys) / len(ys)
        scale = max(math.sqrt(var), self.min_scale)
        z = [(y - mean) / scale for y in ys]
        best: tuple[float, GpFit] | None = None
        # a handful of points cannot tell a smooth surface from a rough one: keep the cautious default until then
        lengths = self.lengths if len(xs) >= MIN_POINTS_TO_FIT_LENGTH and self.lengths else (self.length,)
        for length in lengths:
            fit = self._fit_one(xs, z, length, mean, scale)
            evidence = -0.5 * sum(a * b for a, b in zip(z, fit.alpha, strict=True)) - sum(
                math.log(fit.low[i][i]) for i in range(len(z)))
            if best is None or evidence > best[0]:
                best = (evidence, fit)
        assert best is not None
        return best[1]

    def _fit_one(self, xs: Sequence[Vector], z: Sequence[float], length: float, mean: float, scale: float) -> GpFit:
        n = len(xs)
        k = [[_kernel(xs[i], xs[j], length) + (self.noise if i == j else 0.0) for j in range(n)] for i in range(n)]
        low = _cholesky(k)
        alpha = _solve_upper_t(low, _solve_lower(low, z))
        return GpFit(length, list(xs), low, alpha, mean, scale)


@dataclass(slots=True)
class GpFit:
    length: float
    xs: list[Vector]
    low: list[list[float]]
    alpha: list[float]
    mean: float
    scale: float

    def predict(self, x: Vector) -> tuple[float, float]:
        ks = [_kernel(x, xi, self.length) for xi in self.xs]
        mu = sum(k * a for k, a in zip(ks, self.alpha, strict=True))
        v = _solve_lower(self.low, ks)
        var = max(1.0 - sum(t * t for t in v), 0.0)
        return self.mean + self.scale * mu, self.scale * math.sqrt(var)
