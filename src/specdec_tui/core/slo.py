"""Service-level objectives: "ttft_p99=2s", "itl_p99=50ms", "e2e_p90=30s", "tpot_p50=20ms" (a bare number is ms).

The one reader of the grammar: the bench's `--slo` and profiles, the rate search and the tuner (`core.tune_objective`,
which keeps the targets its objective judges) all parse here.

One target names a latency, a percentile and a limit. A *request* meets it when its own figure is within the
limit (TTFT, E2E: the request's; ITL: the request's own inter-token gaps at that percentile; TPOT: its mean);
a *level* meets it when the percentile over its requests is within the limit. Goodput counts the former;
the rate search (`--find-max-rate`) asks the latter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from specdec_tui.core.metrics import percentile


class SloMetric(StrEnum):
    TTFT = "ttft"
    ITL = "itl"
    TPOT = "tpot"
    E2E = "e2e"


_SPEC = re.compile(r"^\s*(ttft|itl|tpot|e2e)_p(\d{1,2}(?:\.\d+)?)\s*(?:=|<=)\s*(\d*\.?\d+)\s*(ms|s)?\s*$")


class SloError(ValueError):
    """An SLO that cannot be read or judged; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class SloTarget:
    metric: SloMetric
    pct: float
    limit_ms: float

    @property
    def text(self) -> str:
        return f"{self.metric.value}_p{self.pct:g}≤{self.limit_ms:g}ms"


def parse_slo(spec: str) -> SloTarget:
    """One target; SloError (a ValueError) in words."""
    m = _SPEC.match(spec.lower())
    if not m:
        raise SloError(f"SLO {spec!r}: expected METRIC_pNN=LIMIT with METRIC ttft|itl|tpot|e2e and a limit in s or ms, "
                         "e.g. ttft_p99=2s or itl_p99=50ms")
    pct = float(m.group(2))
    if not 0 < pct < 100:
        raise SloError(f"SLO {spec!r}: the percentile must be between 0 and 100")
    limit = float(m.group(3)) * (1000.0 if m.group(4) == "s" else 1.0)
    if limit <= 0:  # no request meets it: goodput 0 whatever the server does
        raise SloError(f"SLO {spec!r}: the limit must be above 0, e.g. ttft_p99=2s")
    return SloTarget(SloMetric(m.group(1)), pct, limit)


def parse_slos(specs: Sequence[str]) -> tuple[SloTarget, ...]:
    """Each of `specs`, which may also hold several targets separated by commas."""
    return tuple(parse_slo(part) for spec in specs for part in spec.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class RequestLatency:
    """The latencies of one successful request, in ms."""

    ttft_ms: float | None
    e2e_ms: float | None
    itl_ms: Sequence[float]
    tokens: int


def request_value(r: RequestLatency, t: SloTarget) -> float | None:
    if t.metric is SloMetric.TTFT:
        return r.ttft_ms
    if t.metric is SloMetric.E2E:
        return r.e2e_ms
    if not r.itl_ms:
        return 0.0  # one chunk: no gap to miss
    if t.metric is SloMetric.TPOT:
        return sum(r.itl_ms) / len(r.itl_ms)
    return percentile(sorted(r.itl_ms), t.pct)


def meets(r: RequestLatency, targets: Sequence[SloTarget]) -> bool:
    """Whether one request met every target (a figure it lacks counts as missed)."""
    for t in targets:
        v = request_value(r, t)
        if v is None or v > t.limit_ms:
            return False
    return True


def level_meets(values: dict[SloMetric, list[float]], targets: Sequence[SloTarget]) -> list[str]:
    """The targets a level missed, in words ([] when it met them all); `values` are its per-request figures
    (ITL: every gap of every request)."""
    missed = []
    for t in targets:
        vals = sorted(values.get(t.metric, []))
        got = percentile(vals, t.pct) if vals else None
        if got is None or got > t.limit_ms:
            missed.append(f"{t.metric.value} p{t.pct:g} {'–' if got is None else f'{got:.0f}'} ms > {t.limit_ms:g} ms")
    return missed
