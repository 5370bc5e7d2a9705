"""Confidence (issue 33): bootstrap intervals cover a known truth ~95 % of the time over repeated seeds, and a
comparison names a winner only when the intervals separate."""

from __future__ import annotations

import math
import random

from specdec_tui.core.confidence import bootstrap, verdict

TRUE_MEAN = 40.0  # a lognormal per-request tok/s with this mean


def _sample(rng: random.Random, n: int) -> list[float]:
    sigma = 0.5
    mu = math.log(TRUE_MEAN) - sigma**2 / 2
    return [rng.lognormvariate(mu, sigma) for _ in range(n)]


def test_intervals_cover_the_truth_about_95_percent_over_repeated_seeds() -> None:
    covered = 0
    runs = 300
    for seed in range(runs):
        iv = bootstrap(_sample(random.Random(seed), 120), rounds=400, seed=seed)
        assert iv is not None
        covered += iv.lo <= TRUE_MEAN <= iv.hi
    assert 0.91 <= covered / runs <= 0.98, covered / runs


def test_a_winner_only_when_intervals_separate_else_how_many_would_tell() -> None:
    rng = random.Random(1)
    base = _sample(rng, 100)
    same = bootstrap(base, seed=1), bootstrap(_sample(rng, 100), seed=2)
    v = verdict("A", same[0], "B", same[1])
    assert v.winner is None and v.text.startswith("no clear difference") and v.samples_needed and v.samples_needed > 100
    faster = bootstrap([x * 1.5 for x in _sample(rng, 100)], seed=3)
    v = verdict("A", same[0], "B", faster)
    assert v.winner == "B" and "separate" in v.text
    v = verdict("A", same[0], "B", faster, higher_is_better=False)  # e.g. TTFT: lower wins
    assert v.winner == "A"
    assert verdict("A", None, "B", faster).winner is None
