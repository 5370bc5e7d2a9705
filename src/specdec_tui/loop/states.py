"""The trial loop's busy state and the steps that can fail: enums only, apart from the event records in
`loop.events` so that the panel's first frame (which shows "idle") does not build those dataclasses."""

from __future__ import annotations

from enum import StrEnum


class Busy(StrEnum):
    """What the loop is doing now; one thing at a time on one host."""

    IDLE = "idle"
    START = "start"  # starting a demo service that was not running
    PUSH = "push"  # push → restart → healthy (→ rollback when it never turns healthy)
    RESTART = "restart"  # restart → healthy
    ROLLBACK = "rollback"  # restore → restart → healthy
    BENCH = "benchmark"
    SWEEP = "sweep"
    TUNE = "tune"
    REPLAY = "replay"
    RATE_SEARCH = "rate search"  # open-loop probes for the highest rate meeting the SLO (loop.rate_search)


# the tasks that run many trials from a screen of their own, holding the loop from first step to last
TASKS = frozenset({Busy.SWEEP, Busy.TUNE, Busy.REPLAY, Busy.RATE_SEARCH})


class Step(StrEnum):
    """A step that can fail; `StepFailed` names it."""

    CONNECT = "connect"
    STATUS = "status"
    PUSH = "push"
    RESTART = "restart"
    HEALTHY = "healthy"
    ROLLBACK = "rollback"
    BENCH = "bench"
    JOURNAL = "journal"
    HEALTH = "health"


class UnitChange(StrEnum):
    """How a unit read from the host differs from the one last read or pushed (`loop.unit_watch` tells which)."""

    READ = "read"  # read on connect or after a task of this panel (a sweep, a replay, a tune): no one else's change
    SAME = "same"  # nothing changed
    PORT = "port"  # only the demo's own port rewrite: carried into the edit, never asked about
    ELSEWHERE = "elsewhere"  # changed outside this panel (another terminal): the form follows it, or the operator is asked
