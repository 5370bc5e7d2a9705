"""The Pareto front in one sorted pass (issue 34: the all-pairs check was a million comparisons at 1,000 trials, on
every change of a sweep) names exactly the trials the definition does: none beaten on both axes, ties kept."""

from __future__ import annotations

import math
import random

from specdec_tui.core.trade_off import TradeOffPoint, pareto_front


def by_definition(points: list[TradeOffPoint]) -> set[int]:
    return {p.trial_id for p in points if not any(
        q.c1_tok_s >= p.c1_tok_s and q.best_tok_s >= p.best_tok_s and (q.c1_tok_s > p.c1_tok_s or q.best_tok_s > p.best_tok_s)
        for q in points)}


def test_the_front_is_the_trials_nothing_beats_on_both_axes_ties_and_all() -> None:
    rng = random.Random(34)
    for _ in range(300):
        n = rng.randint(0, 40)
        values = [float(v) for v in range(rng.randint(1, 6))]  # few values: many ties on one axis or both
        points = [TradeOffPoint(i, f"#{i}", rng.choice(values), rng.choice(values), 1) for i in range(n)]
        assert pareto_front(points) == by_definition(points), points


def test_a_point_with_no_number_is_never_beaten_and_beats_nothing() -> None:
    points = [TradeOffPoint(1, "a", 10.0, 10.0, 1), TradeOffPoint(2, "b", math.nan, 5.0, 1),
              TradeOffPoint(3, "c", 5.0, 5.0, 1)]
    assert pareto_front(points) == by_definition(points) == {1, 2}
