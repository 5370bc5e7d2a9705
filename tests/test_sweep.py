"""Automatic sweeps on the demo host: real simulated SGLang processes, real HTTP, the real session file."""

from __future__ import annotations

import asyncio

import pytest

from specdec_tui.core.session import load_session
from specdec_tui.core.sweep_rules import choose
from specdec_tui.core.sweep_runs import separate_sweeps
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import demo_unit_text
from specdec_tui.loop.sweep import run_sweep
from specdec_tui.loop.sweep_plan import (
    MAX_VALUES,
    SweepDone,
    SweepError,
    SweepPlan,
    SweepStopped,
    SweepTrialDone,
    SweepValueStarted,
    edit_for_value,
    parse_values,
    plan_units,
)
from specdec_tui.loop.trial import TrialLoop

STEPS = "speculative-num-steps"


def flags_of(text: str) -> dict[str, str | None]:
    return UnitFile.parse(text).flags()


async def test_steps_sweep_finds_the_seeds_trade_off(demo_runner: TrialLoop) -> None:
    events: list[object] = []
    original = await demo_runner.read_running()
    outcome = await run_sweep(demo_runner, original, SweepPlan(STEPS, ("1", "2", "3", "4", "5"), repeats=2,
                                                          stop_after_worse=False), on_event=events.append)

    points = {p.value: p for p in outcome.curve}
    assert list(points) == ["1", "2", "3", "4", "5"]
    failed = [(t.sweep.get("value"), t.status, t.failure) for t in demo_runner.session.trials if t.status != "ok"]
    assert all(p.ok == 2 for p in points.values()), failed  # every run measured (else say why, not a TypeError)
    # The seed: single-request speed rises 1 → 3 while capacity falls 26 → 21 → 17.
    assert points["1"].low_c_tok_s < points["2"].low_c_tok_s < points["3"].low_c_tok_s
    assert [points[v].max_running_requests for v in "123"] == [26, 21, 17]
    assert points["5"].max_running_requests < points["3"].max_running_requests
    assert all(p.ok == 2 and p.failed == 0 and p.high_c == 4 and p.high_c_tok_s for p in outcome.curve)

    # One restart per value, two benchmark runs each, every trial tagged and saved.
    saved = load_session(demo_runner.session_path)
    assert [(t.sweep["value"], t.sweep["repeat"]) for t in saved.trials] == [
        (v, r) for v in ("1", "2", "3", "4", "5") for r in (1, 2)]
    assert all(t.status == "ok" and t.unit_text == outcome.unit_by_value[t.sweep["value"]] for t in saved.trials)
    assert flags_of(outcome.unit_by_value["4"])["speculative-num-draft-tokens"] == "5"  # topk 1: steps + 1
    assert [e.value for e in events if isinstance(e, SweepValueStarted)] == ["1", "2", "3", "4", "5"]
    assert sum(isinstance(e, SweepTrialDone) for e in events) == 10
    assert isinstance(events[-1], SweepDone) and events[-1].outcome is outcome

    # The winner is what the rules say about the figures on disk, and it is explained.
    again = choose(separate_sweeps(saved.trials)[0].by_value, outcome.plan.objective)
    assert outcome.winner is not None and outcome.winner == again.winner.value
    assert outcome.winner != "1"
    said = "wins" if again.clear else "is the pick"  # "wins" only for a clear winner
    assert any(f"{outcome.winner} {said}" in r for r in outcome.reasons), outcome.reasons

    # Not asked to apply the best: the unit that ran before is back, byte for byte.
    assert outcome.left_on == "original"
    assert await demo_runner.host.read_unit() == original == outcome.final_unit_text


async def test_value_that_does_not_start_is_recorded_failed_and_rolled_back(demo_runner: TrialLoop) -> None:
    original = await demo_runner.read_running()
    plan = SweepPlan("mem-fraction-static", ("0.85", "0.5", "0.88"), repeats=1, apply_best=True)
    outcome = await run_sweep(demo_runner, original, plan)

    failed = outcome.trials_by_value["0.5"]
    assert [t.status for t in failed] == ["failed"]
    # SGLang's own cause line from the journal: at 0.5 the weights leave nothing, and 0.5.23 says so
    assert "Loaded weights leave no GPU memory for the KV cache" in failed[0].failure
    assert "Raise --mem-fraction-static above 0.669" in failed[0].failure
    assert "rolled back" in failed[0].notes
    assert [t.status for t in outcome.trials_by_value["0.88"]] == ["ok"]  # the sweep went on
    rejected = next(s for s in outcome.choice.stats if s.value == "0.5")
    assert rejected.rejected == "no successful run"
    assert outcome.winner in ("0.85", "0.88")
    # Asked to apply the best: the host runs the winner's unit.
    assert outcome.left_on == "winner"
    assert await demo_runner.host.read_unit() == outcome.unit_by_value[outcome.winner]
    assert (await demo_runner.host.status()).active_state == "active"


async def test_capacity_floor_stops_the_sweep(demo_runner: TrialLoop) -> None:
    events: list[object] = []
    original = await demo_runner.read_running()
    plan = SweepPlan(STEPS, ("1", "2", "3", "4"), repeats=1, min_running_requests=20)
    outcome = await run_sweep(demo_runner, original, plan, on_event=events.append)

    assert list(outcome.trials_by_value) == ["1", "2", "3"]  # 4 never pushed
    assert outcome.stopped is not None and "below the floor of 20" in outcome.stopped
    assert [e.reason for e in events if isinstance(e, SweepStopped)] == [outcome.stopped]
    assert await demo_runner.host.read_unit() == original


async def test_cancelled_sweep_restores_the_unit_that_ran_before(demo_runner: TrialLoop) -> None:
    before = UnitFile.parse(await demo_runner.read_running()).set_flags({STEPS: "2", "speculative-num-draft-tokens": "3"}).text
    await demo_runner.host.push(before)
    await demo_runner.restart()
    await demo_runner.wait_healthy()

    task: asyncio.Task | None = None

    def cancel_on_second_value(event: object) -> None:
        if isinstance(event, SweepValueStarted) and event.value == "3":
            task.cancel()

    task = asyncio.create_task(run_sweep(demo_runner, before, SweepPlan(STEPS, ("1", "3", "4"), repeats=1),
                                         on_event=cancel_on_second_value))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await demo_runner.host.read_unit() == before
    assert (await demo_runner.host.status()).active_state == "active"
    assert [t.sweep["value"] for t in demo_runner.session.trials] == ["1", "3"]
    assert demo_runner.session.trials[-1].status == "cancelled"


# ---------------------------------------------------------------------------------------------- plans, no host


def test_values_accept_lists_and_ranges() -> None:
    assert parse_values("1..3,5") == ("1", "2", "3", "5")
    assert parse_values("0.8, 0.85,0.8") == ("0.8", "0.85")
    with pytest.raises(SweepError, match="backwards"):
        parse_values("6..1")
    with pytest.raises(SweepError, match="no values"):
        parse_values(" , ")
    assert parse_values("1,2,") == ("1", "2")  # a trailing comma is harmless
    with pytest.raises(SweepError, match="'1,,3' has an empty value between commas: a value left out"):
        parse_values("1,,3")  # was silently (1, 3)


def test_edits_keep_the_draft_tree_valid() -> None:
    base = demo_unit_text(30000)
    assert flags_of(edit_for_value(base, STEPS, "3"))["speculative-num-draft-tokens"] == "4"
    topk2 = flags_of(edit_for_value(base, "speculative-eagle-topk", "2"))
    assert topk2["speculative-eagle-topk"] == "2" and topk2[STEPS] == "1"
    many_drafts = UnitFile.parse(base).set_flags({"speculative-eagle-topk": "2", "speculative-num-draft-tokens": "3"}).text
    # topk 2, steps 1 allow at most 3 draft tokens; with more steps the tree grows, so the draft count stays.
    assert flags_of(edit_for_value(many_drafts, STEPS, "2"))["speculative-num-draft-tokens"] == "3"


def test_plan_that_cannot_measure_what_it_says_is_refused() -> None:
    base = demo_unit_text(30000)
    with pytest.raises(SweepError, match="overrides"):  # topk 1: SGLang forces draft tokens = steps + 1
        plan_units(base, SweepPlan("speculative-num-draft-tokens", ("2", "3")))
    with pytest.raises(SweepError, match="argument --speculative-num-steps: invalid int value: .two."):  # 0.5.23's words
        plan_units(base, SweepPlan(STEPS, ("1", "two")))


def test_a_range_too_long_to_run_is_refused_before_it_is_listed() -> None:
    """`--values 1..99999999999` (a slip of the finger, or a paste into the panel's values field) listed every
    number first: the process grew until the machine ran out of memory. A sweep runs at most MAX_VALUES values,
    each a restart and a benchmark; a longer list or range is refused in words, at once."""
    with pytest.raises(SweepError, match=f"at most {MAX_VALUES} values"):
        parse_values("1..99999999999")
    with pytest.raises(SweepError, match=f"at most {MAX_VALUES} values"):
        parse_values(",".join(str(v) for v in range(MAX_VALUES + 1)))
    assert len(parse_values(f"1..{MAX_VALUES}")) == MAX_VALUES


def test_repeats_beyond_the_form_s_limit_are_refused_headless_too() -> None:
    """The panel's form takes 1 to 20 runs per value; `sweep --repeats 100000` was taken and ran."""
    base = demo_unit_text(30000)
    with pytest.raises(SweepError, match="between 1 and 20"):
        plan_units(base, SweepPlan(flag="speculative-num-steps", values=("1", "2"), repeats=100_000))
    with pytest.raises(SweepError, match="between 1 and 20"):
        plan_units(base, SweepPlan(flag="speculative-num-steps", values=("1", "2"), repeats=0))
    assert set(plan_units(base, SweepPlan(flag="speculative-num-steps", values=("1", "2"), repeats=20))) == {"1", "2"}
