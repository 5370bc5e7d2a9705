"""Every loop event and every sweep/replay event travels in a Textual message of its own (issue 34), so the screen
that shows it handles it with `@on`; an event added to the loop without its message fails here, not on screen."""

from __future__ import annotations

from typing import get_args

from specdec_tui.bench.events import LevelDone, LevelProgress, LevelStarted
from specdec_tui.loop import rate_search, replay, sweep_plan
from specdec_tui.loop.events import BenchUpdate, LoopEvent, Phase, StepFailed
from specdec_tui.loop.states import Step
from specdec_tui.ui import loop_messages, task_messages


def test_every_loop_event_has_a_message_named_after_it() -> None:
    table = loop_messages.message_table()
    assert set(table) == set(get_args(LoopEvent))
    for event_type, message_type in table.items():
        assert message_type.__name__ == f"{event_type.__name__}Message"  # type: ignore[attr-defined]
    message = loop_messages.loop_message(StepFailed(Step.PUSH, "refused"))
    assert isinstance(message, loop_messages.StepFailedMessage) and message.event.reason == "refused"


def test_a_task_event_comes_unwrapped_with_its_host() -> None:
    started = LevelStarted(concurrency=4, planned=8)
    message = task_messages.task_message(sweep_plan.OnHost("b", BenchUpdate(1, started)))
    assert isinstance(message, task_messages.LevelStartedMessage)
    assert message.event is started and message.host == "b"
    assert isinstance(task_messages.task_message(Phase("bench")), task_messages.PhaseMessage)
    shown = {LevelStarted, LevelProgress, LevelDone, Phase, sweep_plan.SweepValueStarted, sweep_plan.SweepTrialDone,
             sweep_plan.SweepStopped, sweep_plan.SweepHostFailed, sweep_plan.SweepDone, replay.ReplayStarted, replay.ReplayDone,
             rate_search.RateProbeStarted, rate_search.RateProbeDone, rate_search.RateSearchDone}
    assert set(task_messages.message_table()) == shown
    assert task_messages.task_message(StepFailed(Step.PUSH, "x")) is None  # the screens show its phase instead
