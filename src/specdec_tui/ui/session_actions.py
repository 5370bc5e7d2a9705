"""Helpers the session screens share: the list of saved sessions, the sweep form parsed into a plan,
and the messages their workers post.

Kept apart from the screens so the parsing (what a user typed → a plan, or a sentence saying what is
wrong) is tested without a terminal, and so the screens stay layout plus `@on` handlers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from specdec_tui.core.compare import best_by_concurrency
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, SessionError, load_session
from specdec_tui.core.sweep_rules import Objective

# The flags the sweep form offers: (label, flag name).
SWEEP_FLAGS: tuple[tuple[str, str], ...] = (
    ("steps (speculative-num-steps)", "speculative-num-steps"),
    ("topk (speculative-eagle-topk)", "speculative-eagle-topk"),
    ("draft tokens (speculative-num-draft-tokens)", "speculative-num-draft-tokens"),
)
OBJECTIVES: tuple[tuple[str, str], ...] = (
    ("c=1 tok/s, high concurrency kept ≥ 50%", "c1"),
    ("throughput at the highest concurrency", "throughput"),
)


class FormError(ValueError):
    """What the user typed cannot run; the message says which field and what to write."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One saved session file as a row of the sessions list; `problem` is set when it does not load."""

    path: Path
    created: datetime | None = None
    host: str = ""
    unit: str = ""
    trials: int = 0
    best_c1_tok_s: float | None = None
    best_c1_trial: str = ""
    problem: str = ""


def summarise_session(path: Path) -> SessionSummary:
    try:
        session = load_session(path)
    except SessionError as err:
        return SessionSummary(path=path, problem=str(err))
    best = best_by_concurrency(session, 1)
    level = best.level(1) if best else None
    return SessionSummary(
        path=path, created=session.created, host=session.host, unit=session.unit, trials=len(session.trials),
        best_c1_tok_s=level.output_tok_s if level else None,
        best_c1_trial=(best.label or f"trial {best.id}") if best else "",
    )


def list_sessions(directory: Path) -> list[SessionSummary]:
    """Every `*.toml` in `directory`, newest first (by the session's own start time, else the file's)."""
    if not directory.is_dir():
        return []
    summaries = [summarise_session(p) for p in directory.glob("*.toml") if p.is_file()]

    def newest(s: SessionSummary) -> float:
        return s.created.timestamp() if s.created else s.path.stat().st_mtime

    return sorted(summaries, key=newest, reverse=True)


def open_offline(path: Path) -> Session:
    """A saved session for browsing; raises FormError with the file's problem in words."""
    try:
        return load_session(path)
    except SessionError as err:
        raise FormError(str(err)) from None


# ---------------------------------------------------------------------------------------------- the sweep form


@dataclass(frozen=True, slots=True)
class SweepForm:
    """What the sweep form holds, as typed."""

    flag: str
    values: str
    repeats: str
    objective: str  # "c1" | "throughput"


def plan_from_form(form: SweepForm, profile: BenchProfile) -> Any:
    """The `sweep.SweepPlan` the form describes; FormError naming the field when it cannot run."""
    from specdec_tui.sweep import SweepError, SweepPlan, parse_values

    if form.flag not in {name for _, name in SWEEP_FLAGS}:
        raise FormError(f"flag: pick one of {', '.join(name for _, name in SWEEP_FLAGS)}")
    try:
        values = parse_values(form.values)
    except SweepError as err:
        raise FormError(f"values: {err}") from None
    bad = [v for v in values if not v.isdigit()]
    if bad:
        raise FormError(f"values: {', '.join(bad)} is not a whole number; write e.g. 1..6 or 1,2,3")
    try:
        repeats = int(form.repeats.strip())
    except ValueError:
        raise FormError(f"repeats: {form.repeats.strip() or 'nothing'} is not a whole number; write e.g. 3") from None
    if not 1 <= repeats <= 20:
        raise FormError("repeats: between 1 and 20 runs per value")
    if form.objective == "throughput":
        objective = Objective("throughput", concurrency=max(profile.concurrency))
    else:
        objective = Objective("c1_floor")
    return SweepPlan(flag=form.flag, values=values, repeats=repeats, objective=objective)


# ---------------------------------------------------------------------------------------------- worker messages


@dataclass
class TaskEvent(Message):
    """One event of a sweep or replay (sweep.*/replay.* events, workflow.Phase, bench LevelDone...)."""

    event: Any


@dataclass
class TaskFailed(Message):
    """The sweep or replay stopped on an error; `reason` is in words."""

    reason: str


@dataclass
class TaskCancelled(Message):
    """The sweep or replay was cancelled; the modules restored the unit that ran before."""


@dataclass
class Settled(Message):
    """After "apply the winner?": `problem` is "" when the host now runs the winner."""

    value: str
    problem: str


def in_words(err: BaseException) -> str:
    text = str(err).strip()
    return text or type(err).__name__


class TaskScreen(Screen[Any]):
    """What the sweep and replay screens share: a status line, a result text, the worker group `TASK`,
    and escape that cancels a running task first (the task module restores the unit) and closes after."""

    TASK = "task"

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.outcome: Any = None
        self.log_lines: list[str] = []

    def say(self, line: str) -> None:
        self.log_lines.append(line)
        self.query_one(f"#{self.TASK}-status", Static).update(line)

    def show_result(self, text: str) -> None:
        self.query_one(f"#{self.TASK}-result", Static).update(text)

    def on_task_failed(self, message: TaskFailed) -> None:
        self.running = False
        self.say(f"The {self.TASK} stopped: {message.reason}")
        self.show_result(f"{self.TASK.capitalize()} failed: {message.reason}\nThe unit that ran before the {self.TASK} "
                         "was restored where the host allowed it; check the Health tab. Press escape to go back.")

    def on_task_cancelled(self, _: TaskCancelled) -> None:
        self.running = False
        self.show_result(f"{self.TASK.capitalize()} cancelled. The unit that ran before the {self.TASK} was put back. "
                         "Press escape to go back.")

    def action_close(self) -> None:
        if self.running:
            self.say(f"cancelling: the {self.TASK} puts back the unit that ran before…")
            self.workers.cancel_group(self, self.TASK)
            return
        self.dismiss(self.outcome)
