"""Replaying a saved session on the demo host: same units byte for byte, new trials beside the old ones,
drift per concurrency, and the host left on the unit it ran before."""

from __future__ import annotations

import pytest

from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.replay import ReplayPair, replay_session
from specdec_tui.loop.sweep import run_sweep
from specdec_tui.loop.sweep_plan import SweepPlan
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError

# The sim's run-to-run noise at this size is well under this; steps 1 vs 3 differ by ~60 % at c=1.
TOLERANCE_PCT = 35.0
STEPS_1_AND_3 = SweepPlan("speculative-num-steps", ("1", "3"), repeats=1)


async def start_on(demo_runner: TrialLoop, text: str) -> None:
    await demo_runner.host.push(text)
    await demo_runner.restart()
    await demo_runner.wait_healthy()


def reopen(demo_runner: TrialLoop) -> Session:
    """Continue from the file on disk, as `session replay FILE` does."""
    demo_runner.session = load_session(demo_runner.session_path)
    return demo_runner.session


async def test_replay_reproduces_the_session_and_restores_the_unit(demo_runner: TrialLoop) -> None:
    demo_unit = await demo_runner.read_running()
    # Something other than the recorded trials runs before the replay: steps 2.
    before = UnitFile.parse(demo_unit).set_flags({"speculative-num-steps": "2",
                                                  "speculative-num-draft-tokens": "3"}).text
    await run_sweep(demo_runner, demo_unit, STEPS_1_AND_3)
    await start_on(demo_runner, before)

    session = reopen(demo_runner)
    outcome = await replay_session(demo_runner, session)

    assert [(p.original.id, p.replay.replay_of) for p in outcome.pairs] == [(1, 1), (2, 2)]
    for pair in outcome.pairs:
        assert pair.replay.status == "ok", pair.replay.failure
        assert pair.replay.unit_text == pair.original.unit_text  # exactly what was recorded
        assert pair.replay.facts.max_running_requests == pair.original.facts.max_running_requests
        assert set(pair.drift) == {1, 4}
        assert pair.within(TOLERANCE_PCT), pair.drift
    # The new trials sit beside the old ones in the same file.
    saved = load_session(demo_runner.session_path)
    assert [(t.id, t.replay_of) for t in saved.trials] == [(1, None), (2, None), (3, 1), (4, 2)]
    assert saved.trials[2].label.startswith("replay of")
    # The host is back on the unit that ran before, byte for byte, and running.
    assert outcome.left_on == "original"
    assert await demo_runner.host.read_unit() == before
    assert (await demo_runner.host.status()).active_state == "active"


async def test_keep_best_leaves_the_host_on_the_best_replayed_trial(demo_runner: TrialLoop) -> None:
    await run_sweep(demo_runner, await demo_runner.read_running(), STEPS_1_AND_3)

    session = reopen(demo_runner)
    outcome = await replay_session(demo_runner, session, keep_best=True)

    by_c1 = max(outcome.pairs, key=lambda p: p.replay.level(1).output_tok_s).replay
    assert outcome.left_on == "best" and outcome.kept is by_c1
    assert await demo_runner.host.read_unit() == by_c1.unit_text


async def test_unknown_trial_id_is_refused_before_anything_runs(demo_runner: TrialLoop) -> None:
    session = Session(host="demo", trials=[Trial(id=1, unit_text="x")])
    before = await demo_runner.host.read_unit()
    with pytest.raises(WorkflowError, match="no trial 7"):
        await replay_session(demo_runner, session, trial_ids=[7])
    assert await demo_runner.host.read_unit() == before and len(session.trials) == 1


def _trial(status: str, *tok_s: float) -> Trial:
    return Trial(id=1, unit_text="", status=status,  # type: ignore[arg-type]
                 levels=[LevelResult(concurrency=c, requests=4, output_tok_s=v) for c, v in zip((1, 4), tok_s, strict=False)])


def test_drift_is_percent_per_concurrency_and_status_must_match() -> None:
    pair = ReplayPair(_trial("ok", 200.0, 800.0), _trial("ok", 210.0, 720.0))
    assert pair.drift == pytest.approx({1: 5.0, 4: -10.0})
    assert pair.within(10.0) and not pair.within(9.0)
    assert ReplayPair(_trial("failed"), _trial("failed")).within(1.0)  # a failure reproduced by failing again
    assert not ReplayPair(_trial("ok", 200.0), _trial("failed")).within(50.0)


def test_a_trial_that_failed_again_is_said_so_not_reproduced(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35 (10): replay said "failed → failed … reproduced" for a trial with nothing measured either time."""
    from specdec_tui.cli.render import make_console, replay_table
    from specdec_tui.loop.replay import ReplayOutcome

    pairs = [ReplayPair(_trial("failed"), _trial("failed")), ReplayPair(_trial("ok", 200.0), _trial("ok", 205.0)),
             ReplayPair(_trial("failed"), _trial("ok", 100.0))]
    assert [p.verdict(10.0) for p in pairs] == ["failed again", "within ±10% (no interval)", "was failed, now ok"]
    make_console().print(replay_table(ReplayOutcome(pairs=pairs), 10.0))
    out = capsys.readouterr().out
    assert "failed again" in out and "reproduced" not in out
