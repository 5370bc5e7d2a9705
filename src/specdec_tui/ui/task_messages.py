"""One Textual message per sweep, replay or rate-search event, for the task screens' `@on` handlers (no isinstance ladder).

A sweep or replay worker emits the loop's events (`loop.sweep`, `loop.replay`, `loop.events.Phase`, the
benchmark's level events inside `BenchUpdate`), a host's own wrapped in `OnHost` when a sweep runs on several.
`task_message(event)` unwraps those two and gives the event's message (a table by type) with the host it came
from, or None for an event no task screen shows (the trial loop's own push/restart events: the screens show
their phases)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from textual.message import Message

if TYPE_CHECKING:  # the event types, named in the messages' base classes (strings, so not loaded here)
    from specdec_tui.bench import events as bench  # noqa: F401
    from specdec_tui.loop import events as ev  # noqa: F401
    from specdec_tui.loop import rate_search, replay, sweep_plan  # noqa: F401

EventT = TypeVar("EventT", covariant=True)  # a message of a narrower event is a TaskMessage[object]


class TaskMessage(Message, Generic[EventT]):
    """A task's event, and the host it came from (None: the screen's own host, or a task on one host)."""

    def __init__(self, event: EventT, host: str | None = None) -> None:
        super().__init__()
        self.event = event
        self.host = host


class PhaseMessage(TaskMessage["ev.Phase"]):
    """A step of the current value or trial (push, restart, wait, bench, restore, done)."""


class LevelStartedMessage(TaskMessage["bench.LevelStarted"]):
    """A benchmark level started."""


class LevelProgressMessage(TaskMessage["bench.LevelProgress"]):
    """A benchmark level's progress."""


class LevelDoneMessage(TaskMessage["bench.LevelDone"]):
    """A benchmark level ended."""


class SweepValueStartedMessage(TaskMessage["sweep_plan.SweepValueStarted"]):
    """The sweep started one value (on one host)."""


class SweepTrialDoneMessage(TaskMessage["sweep_plan.SweepTrialDone"]):
    """One run of a value is measured."""


class SweepStoppedMessage(TaskMessage["sweep_plan.SweepStopped"]):
    """The sweep stopped early (its rule said so); the values left are skipped."""


class SweepHostFailedMessage(TaskMessage["sweep_plan.SweepHostFailed"]):
    """One host of several failed; its values are marked."""


class SweepDoneMessage(TaskMessage["sweep_plan.SweepDone"]):
    """The sweep's outcome."""


class ReplayStartedMessage(TaskMessage["replay.ReplayStarted"]):
    """The replay started one trial."""


class ReplayDoneMessage(TaskMessage["replay.ReplayDone"]):
    """The replay's outcome."""


class RateProbeStartedMessage(TaskMessage["rate_search.RateProbeStarted"]):
    """The rate search started a probe at a rate."""


class RateProbeDoneMessage(TaskMessage["rate_search.RateProbeDone"]):
    """A probe ended: met or missed, and the bracket so far."""


class RateSearchDoneMessage(TaskMessage["rate_search.RateSearchDone"]):
    """The rate search's answer."""


_MESSAGES: dict[type, Callable[[object, str | None], Message]] = {}


def message_table() -> dict[type, Callable[[object, str | None], Message]]:
    if not _MESSAGES:
        from specdec_tui.bench import events as bench_events
        from specdec_tui.loop import events, rate_search, replay, sweep_plan

        pairs: list[tuple[type, type[TaskMessage[object]]]] = [
            (events.Phase, PhaseMessage), (bench_events.LevelStarted, LevelStartedMessage),
            (bench_events.LevelProgress, LevelProgressMessage), (bench_events.LevelDone, LevelDoneMessage),
            (sweep_plan.SweepValueStarted, SweepValueStartedMessage), (sweep_plan.SweepTrialDone, SweepTrialDoneMessage),
            (sweep_plan.SweepStopped, SweepStoppedMessage), (sweep_plan.SweepHostFailed, SweepHostFailedMessage),
            (sweep_plan.SweepDone, SweepDoneMessage), (replay.ReplayStarted, ReplayStartedMessage),
            (replay.ReplayDone, ReplayDoneMessage), (rate_search.RateProbeStarted, RateProbeStartedMessage),
            (rate_search.RateProbeDone, RateProbeDoneMessage), (rate_search.RateSearchDone, RateSearchDoneMessage),
        ]
        _MESSAGES.update(pairs)
    return _MESSAGES


def task_message(event: object, host: str | None = None) -> Message | None:
    """`event`'s message (unwrapped from `OnHost` and `BenchUpdate`), or None when no task screen shows it."""
    from specdec_tui.loop.events import unwrap_bench
    from specdec_tui.loop.sweep_plan import OnHost

    if isinstance(event, OnHost):  # a step of one host of several: its host rides along
        host = event.host
        event = event.event
    event = unwrap_bench(event)
    make = message_table().get(type(event))
    return make(event, host) if make is not None else None
