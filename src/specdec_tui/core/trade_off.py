"""The trade-off every speculative setting makes: what one request gets (c=1 per-request tok/s) against what the
server delivers at its best level (total tok/s). Each finished trial is a point; the Pareto front is the set no other
trial beats on both (the seed: steps 1 → 3 raise c=1 from 123 to 234 tok/s while max running requests fall 26 → 17).

"Best" is the one best every view shows (`core.latency.pick`): the highest total tok/s among the levels whose TTFT
p99 stays within the trial's limit, not the peak (which may come from a queue with a TTFT p99 of 13 s). A trial
with no such level, or one not finished (cancelled, failed part-way, running), is no point."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import groupby

from specdec_tui.core.compare import shown_label
from specdec_tui.core.latency import trial_pick
from specdec_tui.core.session import Session


@dataclass(frozen=True, slots=True)
class TradeOffPoint:
    trial_id: int
    label: str
    c1_tok_s: float  # per-request tok/s (p50) at concurrency 1
    best_tok_s: float  # the best total tok/s: the highest within the trial's TTFT p99 limit (core.latency.pick)
    best_at: int  # the concurrency where it was reached
    ttft_limit_s: float = 0.0  # that limit


def trade_off_points(session: Session) -> list[TradeOffPoint]:
    """One point per finished trial with a c=1 level and a best level, in session order."""
    points: list[TradeOffPoint] = []
    for trial in session.trials:
        if trial.status != "ok":
            continue
        c1 = trial.level(1)
        per_request = c1.per_request_tok_s.p50 if c1 is not None else None
        chosen = trial_pick(trial)
        if per_request is None or chosen.best is None:
            continue
        best = chosen.best
        points.append(TradeOffPoint(trial.id, shown_label(trial), per_request, best.output_tok_s, best.concurrency,
                                    chosen.limit.ttft_limit_s))
    return points


def best_axis_name(points: list[TradeOffPoint]) -> str:
    """The y axis's name, with the limit that defines "best": "best tok/s (TTFT p99 ≤ 2 s)"."""
    limits = {p.ttft_limit_s for p in points}
    if len(limits) == 1:
        return f"best tok/s (TTFT p99 ≤ {limits.pop():g} s)"
    return "best tok/s (within each trial's TTFT p99 limit)"


X_AXIS_NAME = "c=1 per-request tok/s (p50)"  # not the trials table's total tok/s at c=1: each says which


def pareto_front(points: list[TradeOffPoint]) -> set[int]:
    """Trial ids no other point dominates (at least as good on both axes and better on one).

    One pass from the highest c=1 down (n log n: the all-pairs check was a million comparisons at 1,000 trials, on
    every change of a sweep): a point is on the front when it is the best of its c=1 value and beats every best
    of a higher c=1. A point with a NaN compares false with all, so nothing dominates it."""
    front = {p.trial_id for p in points if math.isnan(p.c1_tok_s) or math.isnan(p.best_tok_s)}
    ordered = sorted((p for p in points if p.trial_id not in front), key=lambda p: (-p.c1_tok_s, -p.best_tok_s))
    best_right = -math.inf  # the highest best tok/s among points with a higher c=1
    for _, same_c1 in groupby(ordered, key=lambda p: p.c1_tok_s):
        group = list(same_c1)
        top = group[0].best_tok_s
        if top > best_right:
            front.update(p.trial_id for p in group if p.best_tok_s == top)
            best_right = top
    return front
