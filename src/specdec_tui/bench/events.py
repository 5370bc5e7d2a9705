"""What a running benchmark tells its caller, in order: LevelStarted, LevelProgress…, LevelDone, …, RunDone."""

from __future__ import annotations

from dataclasses import dataclass, field

from specdec_tui.core.results import LevelResult


@dataclass(frozen=True, slots=True)
class LevelStarted:
    concurrency: int
    planned: int  # measured requests planned (0 when the level runs for a duration)
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class LevelProgress:
    """Throttled (a few per second): measured requests done so far and the running output rate."""

    concurrency: int
    done: int
    errors: int
    tokens: int
    tok_s: float
    in_flight: int = 0  # open loop: requests sent and not yet ended (closed loop: the concurrency)


@dataclass(frozen=True, slots=True)
class LevelDone:
    result: LevelResult


@dataclass(frozen=True, slots=True)
class RunDone:
    levels: list[LevelResult] = field(default_factory=list)
    cancelled: bool = False
    error: str | None = None  # a run-wide failure in words (bad URL, no prompts), else None


BenchEvent = LevelStarted | LevelProgress | LevelDone | RunDone
