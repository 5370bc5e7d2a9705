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
