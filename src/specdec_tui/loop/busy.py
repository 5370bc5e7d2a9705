"""The busy state of a trial loop and its event stream: one step at a time on one host, a refusal in words
for anything else, and every event sent to the loop's sink and to the listeners of the call in progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field

from specdec_tui.loop.events import BusyChanged, LoopEvent
from specdec_tui.loop.states import Busy
from specdec_tui.loop.unit_checks import WorkflowError

EventSink = Callable[[LoopEvent], None]


class Refused(WorkflowError):
    """An intent that cannot start now (another step runs, no host); the message says why and what to do."""


class UnitChangedElsewhere(Refused):
    """A push found the unit on the host changed since the edit was made (`loop.unit_watch`): nothing was pushed;
    a `UnitLoaded` event has said so and the panel asks the operator what to do (not an error dialog)."""


def _ignore(_event: LoopEvent) -> None:
    return None


# Inside a sweep, tune or replay: the loops it holds (their ids). Their steps belong to it (the busy state stays
# SWEEP/TUNE/REPLAY), while an intent from anywhere else (another worker, another key) is still refused. By loop,
# not one flag: a task on several hosts claims each host's loop in turn, and a flag set by the first claim let the
# others' claims through unmarked (their loops stayed idle while the task drove them).
_IN_TASK: ContextVar[frozenset[int]] = ContextVar("specdec_in_task", default=frozenset())


@dataclass
class BusyState:
    """Held by `TrialLoop`: what runs now (`busy`), where its events go (`sink`, set by the driver)."""

    sink: EventSink = field(default_factory=lambda: _ignore, init=False, repr=False)
    busy: Busy = field(default=Busy.IDLE, init=False)
    _listeners: list[EventSink] = field(default_factory=list, init=False, repr=False)


    def refusal(self, what: Busy) -> str | None:
        """Why `what` cannot start now, in words; None when it can."""
        if self.busy is Busy.IDLE:
            return None
        if self.busy is Busy.BENCH and what is not Busy.BENCH:
            return f"A benchmark is running: cancel it (escape) before a {what.value}."
        if self.busy is Busy.BENCH:
            return "A benchmark is already running (escape cancels it)."
        return f"Wait for the {self.busy.value} to finish before a {what.value}."

    @contextmanager
    def _claimed(self, what: Busy) -> Iterator[None]:
        """Hold the busy state for `what`, or raise Refused; inside a task holding this loop its steps just run."""
        if id(self) in _IN_TASK.get():
            yield
            return
        why = self.refusal(what)
        if why is not None:
            raise Refused(why)
        self._set_busy(what)
        try:
            yield
        finally:
            self._set_busy(Busy.IDLE)

    @contextmanager
    def task(self, what: Busy) -> Iterator[None]:
        """`with loop.task(Busy.SWEEP):` — a sweep, tune or replay owns the loop (and its host: `task_hold`) until
        the block ends."""
        if id(self) in _IN_TASK.get():
            yield
            return
        with self._claimed(what), self.task_hold(what):
            token = _IN_TASK.set(_IN_TASK.get() | {id(self)})
            try:
                yield
            finally:
                _IN_TASK.reset(token)

    def task_hold(self, what: Busy) -> AbstractContextManager[None]:
        """What a task holds beside this loop while it runs (a loop with a host: the host, `loop.host_hold`)."""
        return nullcontext()

    @contextmanager
    def listening(self, on_event: EventSink | None) -> Iterator[None]:
        """Also send this call's events to `on_event` (a sweep tags its trials, a CLI prints phases)."""
        if on_event is None:
            yield
            return
        self._listeners.append(on_event)
        try:
            yield
        finally:
            self._listeners.remove(on_event)

    def emit(self, event: LoopEvent) -> None:
        self.sink(event)
        for listener in tuple(self._listeners):
            listener(event)

    def _set_busy(self, busy: Busy) -> None:
        if busy is not self.busy:
            self.busy = busy
            self.emit(BusyChanged(busy))
