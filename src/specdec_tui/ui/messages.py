"""Messages that workers post to the app. Workers talk to the host and the engine and only post
these; the `@on` handlers in the app own all state and update widgets (one writer, no races).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class UnitLoaded(Message):
    """The unit text as it is on the host now (after connect, push, or rollback)."""

    text: str


@dataclass
class StepFailed(Message):
    """A host/workflow step failed. `what` names the step ("push", "restart"...), `reason` is in words."""

    what: str
    reason: str


@dataclass
class Pushed(Message):
    text: str
    result: Any  # hosts.base.PushResult


@dataclass
class Restarted(Message):
    result: Any  # hosts.base.RestartResult


@dataclass
class Healthy(Message):
    """The server answered after a restart; `facts` is what it says about itself."""

    facts: Any  # core.results.ServerFacts


@dataclass
class HealthChanged(Message):
    snapshot: Any  # health.HealthSnapshot


@dataclass
class JournalBatch(Message):
    """Journal records coalesced by the tail worker (a high-rate log becomes few messages).

    `kinds` holds each record's SGLang kind, parsed by the worker, so the pane need not parse again."""

    records: list[Any]  # hosts.base.JournalRecord
    kinds: list[str] | None = None


@dataclass
class LogStatsChanged(Message):
    """The numbers folded from the journal so far (a copy; sent at most ~5 times a second)."""

    stats: Any  # core.sglang_stats.LogStats


@dataclass
class ServiceInactive(Message):
    """The local demo service is not running at startup (the app starts it, as a real host would run it)."""

    status: Any  # hosts.base.ServiceStatus


@dataclass
class JournalMarker(Message):
    """A line the panel itself writes into the journal view ("— pushed steps=4 —")."""

    text: str


@dataclass
class BenchEventMessage(Message):
    """One event of `bench.engine.run_benchmark` (LevelStarted/LevelProgress/LevelDone/RunDone).

    `run` numbers the benchmark run, so events still queued after a cancel are dropped, not shown."""

    event: Any
    run: int = 0


@dataclass
class BenchFinished(Message):
    levels: list[Any]
    cancelled: bool
    run: int = 0


@dataclass
class TrialRecorded(Message):
    trial: Any  # core.session.Trial


@dataclass
class RolledBack(Message):
    text: str
