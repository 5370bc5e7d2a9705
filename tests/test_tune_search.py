"""The tuner's engine on a deterministic fake surface (tests/tune_surface.py): it finds the grid's best under the
SLO in fewer launches than the grid, never launches what failed or what a failure predicts, never launches what
the release refuses, and says how sure it is."""

from __future__ import annotations

import asyncio

import pytest

from specdec_tui.core.slo import SloError, parse_slos
from specdec_tui.core.tune_objective import (
    FailureKind,
    LaunchResult,
    LevelChoice,
    LevelFigures,
    Slo,
    adaptive_schedule,
    failure_kind,
    objective,
    parse_slo,
    point_of,
)
from specdec_tui.hosts.local.workspace import demo_unit_text
from specdec_tui.loop.tune import LaunchLanded, TunePlan, run_tune
from specdec_tui.loop.tune_search import Search, at_least_as_hungry
from specdec_tui.loop.tune_space import SpaceError, candidates, parse_space
from specdec_tui.loop.unit_checks import check_unit
from tests.tune_surface import GRID_SPACE, LEVELS, FakeLauncher, fails, launch

BASE = demo_unit_text(30000)
SLOS = {"loose": Slo(ttft_p99_ms=2000.0), "binding": Slo(ttft_p99_ms=180.0), "itl": Slo(ttft_p99_ms=200.0, itl_p99_ms=12.0)}


def grid_best(slo: Slo) -> float:
    found, _ = candidates(BASE, GRID_SPACE)
    return max(objective(launch(c.point).levels, slo)[0] for c in found)


@pytest.mark.parametrize("name", list(SLOS))
def test_the_tuner_finds_the_grids_best_in_fewer_launches_and_never_relaunches_a_failure(name: str) -> None:
    slo = SLOS[name]
    found, _ = candidates(BASE, GRID_SPACE)
    host = FakeLauncher()
    outcome = asyncio.run(run_tune([host], found, TunePlan(GRID_SPACE, LEVELS, slo, budget=24)))
    assert outcome.standing is not None
    assert outcome.standing.goodput >= 0.98 * grid_best(slo)
    assert outcome.launches == len(host.launched) <= 24 < len(found)
    failed = [p for p in host.launched if fails(p)]
    assert len(failed) == len(set(failed)) and outcome.retried_failures == 0
    assert sorted(outcome.failed) == sorted(set(failed))
    # the answer came well before the budget ran out
    assert outcome.found_at is not None and outcome.found_at <= 20


def test_the_search_is_deterministic() -> None:
    found, _ = candidates(BASE, GRID_SPACE)
    runs = []
    for _ in range(2):
        host = FakeLauncher()
        asyncio.run(run_tune([host], found, TunePlan(GRID_SPACE, LEVELS, SLOS["binding"], budget=12)))
        runs.append(host.launched)
    assert runs[0] == runs[1] and len(runs[0]) == 12


def test_a_neighbour_predicted_to_fail_costs_no_launch() -> None:
    # steps 5 fails for memory at topk 8 (5 * 8 >= 28): every candidate needing at least as much (steps 7, topk 8,
    # more draft tokens) is predicted to fail and never launched.
    space = {"speculative-num-steps": ("1", "3", "5", "7"), "speculative-eagle-topk": ("8",),
             "speculative-num-draft-tokens": ("8", "16")}
    found, _ = candidates(BASE, space)
    search = Search(found, space, LEVELS, SLOS["loose"])
    failed = point_of({"speculative-num-steps": "5", "speculative-eagle-topk": "8", "speculative-num-draft-tokens": "8"})
    search.observe(launch(failed))
    assert search.results[failed][0].failure_kind is FailureKind.MEMORY
    predicted = {c.point for c, like in search.predicted_failures() if like is not None}
    assert predicted == {c.point for c in found if at_least_as_hungry(c.point, failed, FailureKind.MEMORY)
                         and c.point != failed}
    assert len(predicted) == 3  # steps 5 draft 16, steps 7 draft 8 and 16
    host = FakeLauncher()
    events: list[object] = []
    outcome = asyncio.run(run_tune([host], found, TunePlan(space, LEVELS, SLOS["loose"]), prior=[launch(failed)],
                                   on_event=events.append))
    assert not set(host.launched) & (predicted | {failed})
    assert outcome.retried_failures == 0 and outcome.resumed == 1


def test_failures_are_spared_as_they_land() -> None:
    found, _ = candidates(BASE, GRID_SPACE)
    events: list[object] = []
    asyncio.run(run_tune([FakeLauncher()], found, TunePlan(GRID_SPACE, LEVELS, SLOS["loose"]),
                         on_event=events.append))
    spared = [c for e in events if isinstance(e, LaunchLanded) for c in e.spared]
    assert spared and all(fails(c.point) for c in spared)  # said as they are learned, and right on this surface
    launched = [e.result.point for e in events if isinstance(e, LaunchLanded)]
    assert not {c.point for c in spared} & set(launched)


def test_several_launchers_share_the_budget_and_never_launch_one_point_twice() -> None:
    found, _ = candidates(BASE, GRID_SPACE)
    hosts = [FakeLauncher(n) for n in "abc"]
    outcome = asyncio.run(run_tune(hosts, found, TunePlan(GRID_SPACE, LEVELS, SLOS["binding"], budget=24)))
    launched = [p for h in hosts for p in h.launched]
    assert len(launched) == outcome.launches <= 24 and len(set(launched)) == len(launched)
    assert all(h.launched for h in hosts)
    assert outcome.standing is not None and outcome.standing.goodput >= 0.98 * grid_best(SLOS["binding"])


def test_the_space_never_holds_a_unit_the_release_refuses() -> None:
    found, refused = candidates(BASE, GRID_SPACE)
    for c in found:
        check_unit(c.unit_text)  # raises if a push would refuse it
    reasons = " ".join(r.reason for r in refused)
    assert "impossible" in reasons and "stand for off only with steps 0" in reasons
    # topk 1 runs steps + 1 draft tokens whatever the space says: those combinations are one launch
    chain = [c for c in found if dict(c.point)["speculative-eagle-topk"] == "1"]
    assert {dict(c.point)["speculative-num-draft-tokens"] for c in chain if dict(c.point)["speculative-num-steps"] == "3"} == {"4"}
    off = [c for c in found if not c.speculative]
    assert len(off) == 1 and "--speculative" not in off[0].unit_text


def test_repeats_only_when_the_best_two_are_within_the_noise() -> None:
    space = {"speculative-num-steps": ("1", "3")}
    found, _ = candidates(BASE, space)

    class Close(FakeLauncher):
        async def launch(self, candidate, why):  # type: ignore[no-untyped-def]
            self.launched.append(candidate.point)
            steps = dict(candidate.point)["speculative-num-steps"]
            tok = 1000.0 if steps == "1" else 1010.0  # 1 % apart: within 3 % noise
            return LaunchResult(candidate.point, (LevelFigures(1, tok, 100.0, 10.0),), 20)

    host = Close()
    outcome = asyncio.run(run_tune([host], found, TunePlan(space, (1,), SLOS["loose"])))
    assert sorted(host.launched) == sorted([c.point for c in found] * 2)
    assert outcome.standing is not None and outcome.standing.confidence.startswith("low")
    words = outcome.standing.confidence  # intervals over launches, kept no narrower than the run noise allows
    assert "; goodput " in words and "(over launches, with run-to-run noise ±3 %, the default)" in words
    far = FakeLauncher()
    asyncio.run(run_tune([far], found, TunePlan(space, LEVELS, SLOS["loose"])))
    assert len(far.launched) == 2  # steps 3 is well ahead on the surface: no repeat


def test_the_schedule_becomes_adaptive_tiers() -> None:
    steps = {1: "5", 4: "5", 16: "3", 32: "1"}
    choices = [LevelChoice(c, point_of({"speculative-num-steps": s}), 100.0) for c, s in steps.items()]
    tiers = adaptive_schedule(choices)
    assert tiers is not None
    assert tiers.to_json() == {"1": {"candidate_steps": [3, 5]}, "16": {"candidate_steps": [1, 3]},
                               "32": {"candidate_steps": [1]}}
    assert adaptive_schedule([LevelChoice(1, None)]) is None


def test_slo_space_and_failure_words() -> None:
    assert parse_slo(["ttft_p99=2s", "itl_p99=50ms"]) == Slo(2000.0, 50.0)
    assert parse_slo(["itl_p99=40"]) == Slo(None, 40.0)
    with pytest.raises(SloError, match="e.g. ttft_p99=2s"):
        parse_slo(["p99=2s"])
    with pytest.raises(SpaceError, match="the tuner searches"):
        parse_space(["tp=1,2"])
    with pytest.raises(SpaceError, match="given twice"):
        parse_space(["speculative-num-steps=1", "--speculative-num-steps=2"])
    with pytest.raises(SpaceError, match="an empty value between commas: a value left out"):
        parse_space(["speculative-num-steps=1,,3"])  # was silently (1, 3)
    assert failure_kind("the server failed while starting — journal: RuntimeError: Not enough memory. Please "
                        "try to increase --mem-fraction-static.") is FailureKind.MEMORY
    assert failure_kind("journal: Exception: Capture cuda graph failed: CUDA out of memory.") is FailureKind.CAPTURE
    assert failure_kind("the server did not become ready within 900 s") is FailureKind.OTHER


def test_one_launch_is_never_high_confidence() -> None:
    # Budget 1 over two configurations: the one launched meets the SLO, the other was never tried, so the choice
    # has beaten nothing (the Tune screen said "Confidence high: no other configuration meets the SLO").
    space = parse_space(["speculative-num-steps=1,2"])
    found, _ = candidates(BASE, space)
    outcome = asyncio.run(run_tune([FakeLauncher()], found, TunePlan(space, LEVELS, SLOS["loose"], budget=1)))
    assert outcome.launches == 1 and outcome.standing is not None
    assert outcome.standing.confidence == "low: the only configuration launched (1 of the space not launched)"


def test_an_slo_of_zero_is_refused_where_it_is_typed() -> None:
    """ttft_p99=0s started a 24-launch tune in the panel that no configuration could ever meet; `bench --slo`
    took it too and counted a goodput of 0. Both say the limit must be above 0."""
    from specdec_tui.core.slo import parse_slo as parse_bench_slo

    for spec in ("ttft_p99=0s", "itl_p99=0ms", "ttft_p99=0.0"):
        with pytest.raises(SloError, match="above 0"):
            parse_slo([spec])
    with pytest.raises(ValueError, match="above 0"):
        parse_bench_slo("ttft_p99=0ms")
    assert parse_slo(["ttft_p99=0.5s"]) == Slo(500.0, None)


def test_the_tuner_and_the_bench_read_one_slo_grammar() -> None:
    """Two parsers had drifted (the tuner took a bare number as ms, the bench refused it; the bench took `<=` and
    commas, the tuner did not). One grammar now: both read the same words; the tuner refuses in words what its
    objective cannot judge instead of failing to read it."""
    for text in ("ttft_p99=2s", "ttft_p99<=2000ms", "ttft_p99=2000", "itl_p99=.05s", "ttft_p99=2s,itl_p99=50ms"):
        bench = {t.metric.value: t.limit_ms for t in parse_slos([text])}
        tuned = parse_slo([text])
        assert (tuned.ttft_p99_ms, tuned.itl_p99_ms) == (bench.get("ttft"), bench.get("itl")), text
    for text in ("e2e_p99=30s", "ttft_p90=2s"):
        assert parse_slos([text])  # the bench judges it (goodput, rate search)
        with pytest.raises(SloError, match="the tuner judges TTFT p99 and ITL p99"):
            parse_slo([text])
