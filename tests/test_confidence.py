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


def test_numbers_in_the_verdicts_words_have_thousands_separators_and_no_exponent() -> None:
    """Compare once read "about 134681 requests each would tell a 0.02 tok/s difference", and a difference of
    1,234 read "1.23e+03": every number in a verdict's words is written by core.number_format."""
    import re

    from specdec_tui.core.confidence import compare_samples

    rng = random.Random(7)
    a = [5000 + rng.gauss(0, 400) for _ in range(120)]
    # half a tok/s apart: a difference the figures show (0.02 apart they read the same, and are said equal)
    near = compare_samples("per-request tok/s", "A", a, "B", [x + 0.5 for x in a], unit=" tok/s", noise=None)
    assert near.winner is None and near.samples_needed is not None and near.samples_needed >= 1000, near
    assert f"about {near.samples_needed:,} requests each would tell a 0.5 tok/s difference" in near.text, near.text
    same = compare_samples("per-request tok/s", "A", a, "B", [x + 0.02 for x in a], unit=" tok/s", noise=None)
    assert same.text.endswith("the figures are equal (5,012.7 tok/s each); no count of repeats would tell them apart")
    far = compare_samples("goodput", "A", [100_000.0, 160_000.0], "B", [101_234.0, 161_234.0], over="launches",
                          unit=" tok/s", noise=None)
    assert "a 1,234 tok/s difference" in far.text and "100,000.0" in far.text, far.text
    for text in (near.text, far.text):
        assert re.search(r"\d{4}", text) is None and "e+" not in text, text
