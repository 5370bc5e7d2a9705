"""The sweep's choice: median over repeats, noise rejection, conservative score, smallest near-best value."""

from __future__ import annotations

from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.core.sweep_rules import Objective, choose, stop_reason, summarise


def trial(c1: float, c64: float, mrr: int = 20, status: str = "ok") -> Trial:
    return Trial(
        id=0, unit_text="", status=status,  # type: ignore[arg-type]
        facts=ServerFacts(max_running_requests=mrr),
        levels=[LevelResult(concurrency=1, requests=4, output_tok_s=c1),
                LevelResult(concurrency=64, requests=64, output_tok_s=c64)],
    )


def test_median_over_repeats_and_the_seed_shape_wins_at_steps_3() -> None:
    runs = {
        "1": [trial(123, 1500, 26), trial(121, 1490, 26), trial(125, 1510, 26)],
        "2": [trial(186, 1450, 21), trial(184, 1440, 21), trial(188, 1460, 21)],
        "3": [trial(234, 1300, 17), trial(230, 1310, 17), trial(236, 1290, 17)],
        "4": [trial(240, 600, 13), trial(238, 610, 13), trial(241, 590, 13)],
    }
    choice = choose(runs)
    assert choice.winner is not None and choice.winner.value == "3"
    four = next(s for s in choice.stats if s.value == "4")
    assert "below the floor" in four.rejected  # c=64 fell under half the baseline's
    assert any("objective" in r for r in choice.reasons)


def test_noisy_setting_is_rejected() -> None:
    runs = {"1": [trial(120, 1000)] * 3, "2": [trial(100, 1000), trial(200, 1000), trial(300, 1000)]}
    choice = choose(runs)
    noisy = next(s for s in choice.stats if s.value == "2")
    assert noisy.rejected.startswith("too noisy")
    assert choice.winner.value == "1"


def test_smallest_value_within_one_percent_wins() -> None:
    runs = {"2": [trial(200, 1000)] * 3, "3": [trial(201, 1000)] * 3}
    choice = choose(runs)
    assert choice.winner.value == "2"
    assert any("within 1%" in r for r in choice.reasons)


def test_conservative_score_is_median_minus_scaled_mad() -> None:
    stats = summarise({"1": [trial(100, 1), trial(104, 1), trial(110, 1)]}, Objective())
    assert stats[0].median == 104
    assert stats[0].mad == 4
    assert abs(stats[0].conservative - (104 - 1.4826 * 4)) < 1e-9


def test_failed_runs_do_not_win() -> None:
    choice = choose({"1": [trial(100, 1000)], "5": [trial(0, 0, status="failed")]})
    assert next(s for s in choice.stats if s.value == "5").rejected == "no successful run"
    assert choice.winner.value == "1"


def test_throughput_objective() -> None:
    runs = {"1": [trial(100, 1500)], "3": [trial(230, 1300)]}
    assert choose(runs, Objective(kind="throughput", concurrency=64)).winner.value == "1"


def test_stop_rules() -> None:
    stats = summarise({"1": [trial(200, 1)], "2": [trial(190, 1)], "3": [trial(180, 1)]}, Objective())
    assert stop_reason(stats) == "two consecutive values got worse"
    assert stop_reason(stats[:2]) is None
    capacity = summarise({"3": [trial(234, 1, mrr=17)]}, Objective())
    assert "below the floor of 20" in stop_reason(capacity, min_running_requests=20)


def sampled(c1_samples: list[float]) -> Trial:
    one = trial(sum(c1_samples), 1000)
    one.levels[0].tok_s_samples = c1_samples
    one.levels[0].requests = len(c1_samples)
    return one


def test_a_pick_within_the_noise_is_called_a_pick_with_one_count_of_repeats_everywhere() -> None:
    """The sweep's reasons said "1 wins" under a headline of "no clear difference", and its row "about 282 repeats
    would tell" where the detail said "more than 99 repeats" (a new user's pass on the demo)."""
    spread = [-6.0, -4.0, -2.0, -1.0, 1.0, 2.0, 4.0, 6.0]
    runs = {"1": [sampled([100.0 + d for d in spread])], "2": [sampled([99.6 + d for d in spread])]}
    choice = choose(runs)
    assert choice.winner is not None and choice.winner.value == "1" and not choice.clear
    assert "1 is the pick" in choice.reasons and not any("wins" in r for r in choice.reasons), choice.reasons
    confidence = next(r for r in choice.reasons if r.startswith("confidence:"))
    assert "more than 99 repeats each would tell" in confidence, confidence
    assert choice.mark("1") == "pick: no clear difference, more than 99 repeats would tell"
    assert choice.headline("speculative-num-steps").endswith("more than 99 repeats each would tell)")
