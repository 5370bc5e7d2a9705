"""One Textual message per trial-loop event (`loop.events`), so each is handled with `@on` where it is shown
(`ui.screens.loop_screen.LoopScreen`, the main screen's base) instead of one message and an isinstance ladder.

`loop_message(event)` wraps an event in its message (a table by type). Written with `__init__`, as Textual's own
messages are and as `ui.messages` explains: this module loads with the main screen, before the first frame, and
the event classes themselves load with the trial loop, after it (field types only, here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from textual.message import Message

if TYPE_CHECKING:
    from specdec_tui.loop import events as ev

EventT = TypeVar("EventT", covariant=True)  # a message of a narrower event is a LoopMessage[object]


class LoopMessage(Message, Generic[EventT]):
    """What every loop message holds: the loop's own event (a frozen dataclass), in the order it was emitted."""

    def __init__(self, event: EventT) -> None:
        super().__init__()
        self.event = event


class PhaseMessage(LoopMessage["ev.Phase"]):
    """A step's progress (push, restart, wait, bench, ...): for headless printers; the panel shows the steps."""


class BusyChangedMessage(LoopMessage["ev.BusyChanged"]):
    """The loop's busy state changed: the footer's keys follow, an ended wait is closed."""


class UnitLoadedMessage(LoopMessage["ev.UnitLoaded"]):
    """The unit as the host has it now: the Config tab follows (an edit in progress is kept)."""


class ReleaseLearnedMessage(LoopMessage["ev.ReleaseLearned"]):
    """The SGLang release that judges the host's unit: the form checks by it (and says when 0.5.23 stands in)."""


class PushedMessage(LoopMessage["ev.Pushed"]):
    """The edit is on the host (a trial started): the form follows, the draft is cleared, a journal marker."""


class RestartedMessage(LoopMessage["ev.Restarted"]):
    """The service was restarted: the health views wait for it."""


class HealthyMessage(LoopMessage["ev.Healthy"]):
    """The server answers after a (re)start: the wait ends, an auto-benchmark may follow."""


class RolledBackMessage(LoopMessage["ev.RolledBack"]):
    """The previous unit is back on the host: the form shows it."""


class StepFailedMessage(LoopMessage["ev.StepFailed"]):
    """A step failed, in words: a dialog for the steps that change the host, a notification for the rest."""


class BenchStartedMessage(LoopMessage["ev.BenchStarted"]):
    """A benchmark started: the Bench tab shows its pending rows."""


class BenchUpdateMessage(LoopMessage["ev.BenchUpdate"]):
    """One event of the running benchmark: its row fills."""


class TrialChangedMessage(LoopMessage["ev.TrialChanged"]):
    """The trial gained a level or changed (and was saved): the trials list and charts follow."""


class TrialEndedMessage(LoopMessage["ev.TrialEnded"]):
    """The trial is final (ok, failed, cancelled): the lists follow and the outcome is said."""


class SessionSaveChangedMessage(LoopMessage["ev.SessionSaveChanged"]):
    """The session file could not be written, or is written again: said in a notification."""


_MESSAGES: dict[type, Callable[[ev.LoopEvent], Message]] = {}


def message_table() -> dict[type, Callable[[ev.LoopEvent], Message]]:
    """Each loop event's type and the message class it travels in (loaded with the loop's events, on first use)."""
    if not _MESSAGES:
        from specdec_tui.loop import events

        pairs: list[tuple[type, type[LoopMessage[object]]]] = [
            (events.Phase, PhaseMessage), (events.BusyChanged, BusyChangedMessage),
            (events.UnitLoaded, UnitLoadedMessage), (events.ReleaseLearned, ReleaseLearnedMessage),
            (events.Pushed, PushedMessage),
            (events.Restarted, RestartedMessage), (events.Healthy, HealthyMessage),
            (events.RolledBack, RolledBackMessage), (events.StepFailed, StepFailedMessage),
            (events.BenchStarted, BenchStartedMessage), (events.BenchUpdate, BenchUpdateMessage),
            (events.TrialChanged, TrialChangedMessage), (events.TrialEnded, TrialEndedMessage),
            (events.SessionSaveChanged, SessionSaveChangedMessage),
        ]
        _MESSAGES.update(pairs)
    return _MESSAGES


def loop_message(event: ev.LoopEvent) -> Message:
    """`event` in its own message class."""
    return message_table()[type(event)](event)
