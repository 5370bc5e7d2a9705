"""The trial loop on the real demo host: a simulated SGLang process, real HTTP, real session file."""

from __future__ import annotations

import pytest

from specdec_tui.core.compare import change_label
from specdec_tui.core.session import load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.events import Phase
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError


def edit(text: str, **flags: str) -> str:
    return UnitFile.parse(text).set_flags({k.replace("_", "-"): v for k, v in flags.items()}).text


async def test_full_trial_records_facts_and_results(demo_runner: TrialLoop) -> None:
    phases: list[str] = []
    text = edit(await demo_runner.read_running(), speculative_num_steps="3", speculative_num_draft_tokens="4")
    trial = await demo_runner.run_trial(text, on_event=lambda e: phases.append(e.name) if isinstance(e, Phase) else None)

    assert trial.status == "ok", trial.failure
    assert phases == ["push", "restart", "wait", "bench", "done"]
    assert trial.facts is not None
    assert trial.facts.max_running_requests == 17  # the seed's step 3
    assert trial.facts.speculative["num_steps"] == 3
    assert [lv.concurrency for lv in trial.levels] == [1, 4]
    assert all(lv.output_tok_s > 0 and lv.errors == 0 for lv in trial.levels)
    assert trial.label == "steps=3 draft=4"  # every flag changed against the unit that ran
    # The session on disk has the trial with its results, exactly as pushed.
    saved = load_session(demo_runner.session_path)
    assert saved.trials[0].unit_text == text
    assert saved.trials[0].levels[0].output_tok_s == pytest.approx(trial.levels[0].output_tok_s, rel=1e-5)
    assert await demo_runner.host.read_unit() == text


async def test_failed_start_is_recorded_and_rolled_back(demo_runner: TrialLoop) -> None:
    good = await demo_runner.read_running()
    first = await demo_runner.run_trial(good, run_bench=False)
    assert first.status == "ok", first.failure

    bad = edit(good, mem_fraction_static="0.5")  # the weights do not fit the static fraction: SGLang refuses to start
    trial = await demo_runner.run_trial(bad, run_bench=False)

    assert trial.status == "failed"
    # the journal's own error line (0.5.23's words, with the fraction that would do), not a generic timeout
    assert "Loaded weights leave no GPU memory for the KV cache" in trial.failure
    assert "Raise --mem-fraction-static above 0.669" in trial.failure
    assert "rolled back" in trial.notes and "healthy again" in trial.notes
    assert await demo_runner.host.read_unit() == good  # byte-identical previous unit
    status = await demo_runner.host.status()
    assert status.active_state == "active"
    saved = load_session(demo_runner.session_path)
    assert [t.status for t in saved.trials] == ["ok", "failed"]


async def test_invalid_edit_is_refused_before_anything_is_pushed(demo_runner: TrialLoop) -> None:
    good = await demo_runner.read_running()
    bad = edit(good, speculative_num_steps="three")  # an unknown algorithm is only a warning now (plugins)
    with pytest.raises(WorkflowError, match="block a push"):
        await demo_runner.run_trial(bad)
    assert await demo_runner.host.read_unit() == good
    assert demo_runner.session.trials == []


def test_change_labels() -> None:
    assert change_label(None, {"speculative-num-steps": "1"}) == "steps=1"
    assert change_label({"speculative-num-steps": "1", "speculative-num-draft-tokens": "2"},
                        {"speculative-num-steps": "2", "speculative-num-draft-tokens": "3"}) == "steps=2 draft=3"
    assert change_label({"x": "1"}, {"x": "1"}) == "same flags"
    assert change_label({"enable-metrics": None}, {}) == "enable-metrics=off"


async def test_a_trial_label_is_the_whole_change_against_the_unit_that_ran_before(demo_runner: TrialLoop) -> None:
    """Issue 35 (9): `#1 steps=4` hid draft 2→5 (a first trial showed only steps), `steps=2 draft=3` hid topk 2→1
    (compared with the last ok trial, not what ran), the demo's port rewrite read as a change, and a removed flag
    read "=off"."""
    from specdec_tui.core.unit import UnitFile

    running = UnitFile.parse(await demo_runner.read_running())
    edited = running.set_flags({"speculative-num-steps": "4", "speculative-num-draft-tokens": "5",
                                "port": "49587"}, unset=["speculative-algorithm"])
    first = demo_runner.start_trial(edited.text, before=running.text)
    assert first.label == "algorithm removed steps=4 draft=5"  # in the unit's order; the port is the tool's
    assert demo_runner.start_trial(edited.text).label == "same flags"  # a benchmark of the unit as it is
    demo_runner.session.trials.clear()
    assert demo_runner.start_trial(running.text, before=running.text).label == "baseline"  # the first, unchanged
    assert change_label({"enable-metrics": None, "x": "1"}, {}) == "enable-metrics=off x removed"
