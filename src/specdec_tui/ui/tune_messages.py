"""What the Tune screen's worker posts: one message class per tune event (`loop.tune`), each handled with `@on`
by the screen. Loaded with the screen, not on the panel's start. `tune_message(event)` gives an event's message
(a table by type, as `ui.task_messages` and `ui.loop_messages` have), or None for one the screen does not show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from textual.message import Message

from specdec_tui.loop.tune import LaunchLanded, LaunchStarted, TuneOutcome, TuneStarted
from specdec_tui.loop.tune_adaptive import AdaptiveCheck

EventT = TypeVar("EventT", covariant=True)  # a message of a narrower event is a TuneMessage[object]


class TuneMessage(Message, Generic[EventT]):
    """A tune event, as the search emitted it."""

    def __init__(self, event: EventT) -> None:
        super().__init__()
        self.event = event


class TuneBegan(TuneMessage[TuneStarted]):
    """The space is known: how many candidates, how many the release refuses, launches resumed."""


class TuneLaunching(TuneMessage[LaunchStarted]):
    """A launch is on its way: which configuration, on which host, and why the search chose it."""


class TuneLanded(TuneMessage[LaunchLanded]):
    """A launch measured every level (or failed to start); the standing after it."""


class TuneStep(Message):
    """A step of the launch on its way (push, restart, wait, bench), for the status line."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words


class TuneLevel(Message):
    """A level of the launch's benchmark started (`planned` requests, 0 for a timed level) or moved on (`done`):
    a launch measures five levels for minutes, and "bench" alone said nothing moved."""

    def __init__(self, host: str, concurrency: int, done: int | None, planned: int | None) -> None:
        super().__init__()
        self.host, self.concurrency, self.done, self.planned = host, concurrency, done, planned


class TuneAdaptiveChecked(TuneMessage[AdaptiveCheck]):
    """The schedule ran as adaptive speculation across every level, judged against the schedule."""


class TuneFinished(Message):
    """The search ended: the choice, its confidence, the schedule; the host runs the unit it ran before."""

    def __init__(self, outcome: TuneOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class TuneStopped(Message):
    """The tune stopped before its end (an error in words, or a cancel); the unit that ran before is back."""

    def __init__(self, reason: str, *, cancelled: bool = False) -> None:
        super().__init__()
        self.reason = reason
        self.cancelled = cancelled


class TuneOthersPushed(Message):
    """`a` on a tune across several hosts: the choice is on the other hosts (`problems`: where not, in words)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__()
        self.problems = problems


_MESSAGES: dict[type, Callable[[object], Message]] = {}


def tune_message(event: object) -> Message | None:
    """`event`'s message: a step (`Phase`, but its "done") as words, one of several hosts' steps with its host,
    the search's own events in their classes; None for what the screen does not show."""
    from specdec_tui.bench.events import LevelProgress, LevelStarted
    from specdec_tui.loop.events import BenchUpdate, Phase
    from specdec_tui.loop.sweep_plan import OnHost

    host = ""
    if isinstance(event, OnHost):  # a step on one of several hosts: said with its host (its other events are not)
        host, event = f"{event.host}: ", event.event
        if not isinstance(event, (Phase, BenchUpdate)):
            return None
    if isinstance(event, BenchUpdate):
        level = event.event
        if isinstance(level, LevelStarted):
            return TuneLevel(host, level.concurrency, None, level.planned)
        if isinstance(level, LevelProgress):
            return TuneLevel(host, level.concurrency, level.done, None)
        return None
    if isinstance(event, Phase):
        return TuneStep(f"{host}{event.name}" + (f": {event.detail}" if event.detail else "")) \
            if event.name != "done" else None
    if not _MESSAGES:
        pairs: list[tuple[type, type[TuneMessage[object]]]] = [
            (TuneStarted, TuneBegan), (LaunchStarted, TuneLaunching), (LaunchLanded, TuneLanded),
            (AdaptiveCheck, TuneAdaptiveChecked)]
        _MESSAGES.update(pairs)
    make = _MESSAGES.get(type(event))
    return make(event) if make is not None else None
