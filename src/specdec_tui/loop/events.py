"""What the trial loop tells whoever drives it: the busy state, each step's outcome, trial changes and the
benchmark's events, in order. The panel renders them; the headless commands print them. Nothing here is
Textual: the panel wraps each event in a message of its own (`ui.loop_messages`), handled where it is shown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.bench.events import BenchEvent
from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.hosts.base import PushResult, RestartResult
from specdec_tui.loop.states import Busy, Step, UnitChange

if TYPE_CHECKING:
    from specdec_tui.core.sglang_schema.schema import ReleaseSchema


@dataclass(frozen=True, slots=True)
class Phase:
    """Progress of a trial for headless output: push, restart, wait, bench, rollback, done."""

    name: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class BusyChanged:
    busy: Busy


@dataclass(frozen=True, slots=True)
class UnitLoaded:
    """The unit text as it is on the host now (read after connect, after a sweep/replay, or found changed outside
    this panel: `change`; `refused_push`: found by a push, which then pushed nothing)."""

    text: str
    change: UnitChange = UnitChange.READ
    refused_push: bool = False


@dataclass(frozen=True, slots=True)
class Pushed:
    text: str
    result: PushResult
    trial: Trial


@dataclass(frozen=True, slots=True)
class Restarted:
    result: RestartResult
    healthy_within_s: float = 900.0  # how long the loop now waits for the server to answer (the host's setting)


@dataclass(frozen=True, slots=True)
class Healthy:
    """The server answered after a (re)start; `facts` is what it says about itself."""

    facts: ServerFacts | None


@dataclass(frozen=True, slots=True)
class RolledBack:
    text: str


@dataclass(frozen=True, slots=True)
class StepFailed:
    """A step failed; `reason` is in words (what failed, what to do)."""

    step: Step
    reason: str


@dataclass(frozen=True, slots=True)
class BenchStarted:
    run: int
    concurrency: tuple[int, ...]
    previous: list[LevelResult] | None  # the last measured trial's levels, for the Δ column
    trial: Trial | None = None  # the trial being measured: its server's capacity marks queueing levels


@dataclass(frozen=True, slots=True)
class BenchUpdate:
    run: int
    event: BenchEvent


@dataclass(frozen=True, slots=True)
class TrialChanged:
    """The trial gained a level or its status/facts changed; it has been saved already."""

    trial: Trial


@dataclass(frozen=True, slots=True)
class TrialEnded:
    """The trial has its final status (ok, failed with `failure`, cancelled) and is saved."""

    trial: Trial


@dataclass(frozen=True, slots=True)
class ReleaseLearned:
    """The SGLang release that judges the host's unit (loop/sglang_release.py): its version, where its schema came
    from, and a note when it is not the host's own (the bundled 0.5.23 stands in)."""

    version: str
    source: str
    note: str
    schema: ReleaseSchema


@dataclass(frozen=True, slots=True)
class SessionSaveChanged:
    """The session file could not be written (`failure`, in words: what failed, what to do), or, with `failure`
    "", it is written again after such a failure. The trials go on meanwhile, kept in memory."""

    path: Path
    failure: str = ""


LoopEvent = (
    Phase | BusyChanged | UnitLoaded | ReleaseLearned | Pushed | Restarted | Healthy | RolledBack | StepFailed | BenchStarted
    | BenchUpdate | TrialChanged | TrialEnded | SessionSaveChanged
)


def unwrap_bench(event: object) -> object:
    """The benchmark's own event inside a `BenchUpdate`; any other event unchanged (for printers that
    render bench events and loop events from one stream)."""
    return event.event if isinstance(event, BenchUpdate) else event
