"""The trade-off every speculative setting makes: what one request gets (c=1 per-request tok/s) against what the
server delivers at its best level (total tok/s). Each finished trial is a point; the Pareto front is the set no other
trial beats on both (the seed: steps 1 → 3 raise c=1 from 123 to 234 tok/s while max running requests fall 26 → 17)."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_tui.core.compare import trial_label
from specdec_tui.core.session import Session


@dataclass(frozen=True, slots=True)
class TradeOffPoint:
    trial_id: int
    label: str
    c1_tok_s: float  # per-request tok/s (p50) at concurrency 1
    best_tok_s: float  # the highest total tok/s over the trial's levels
    best_at: int  # the concurrency where it was reached


def trade_off_points(session: Session) -> list[TradeOffPoint]:
    """One point per trial that measured both c=1 and at least one level, in session order."""
    points: list[TradeOffPoint] = []
    for trial in session.trials:
        c1 = trial.level(1)
        per_request = c1.per_request_tok_s.p50 if c1 is not None else None
        if per_request is None or not trial.levels:
            continue
        best = max(trial.levels, key=lambda lv: lv.output_tok_s)
        points.append(TradeOffPoint(trial.id, trial_label(trial), per_request, best.output_tok_s, best.concurrency))
    return points


def pareto_front(points: list[TradeOffPoint]) -> set[int]:
    """Trial ids no other point dominates (at least as good on both axes and better on one)."""
    front: set[int] = set()
    for p in points:
        dominated = any(
            q.c1_tok_s >= p.c1_tok_s and q.best_tok_s >= p.best_tok_s and (q.c1_tok_s > p.c1_tok_s or q.best_tok_s > p.best_tok_s)
            for q in points
        )
        if not dominated:
            front.add(p.trial_id)
    return front
