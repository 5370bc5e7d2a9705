"""What the sweep, replay and rate-search screens share: the messages their workers post (each event its own,
`ui.task_messages`), a status line, a result text,
and escape that cancels a running task first (the loop restores the unit) and closes after."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Generic, TypeVar

from textual import on
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from specdec_tui.core.progress import eta_words
from specdec_tui.ui.task_messages import task_message


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


OutcomeT = TypeVar("OutcomeT")


class TaskScreen(Screen[object], Generic[OutcomeT]):
    """What the sweep and replay screens share: a status line, a result text, the worker group `TASK`,
    and escape that cancels a running task first (the task module restores the unit) and closes after."""

    TASK = "task"

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.cancelling = False  # escape was pressed: the task is putting back the unit that ran before
        self.outcome: OutcomeT | None = None
        self.log_lines: list[str] = []
        self.started = time.monotonic()  # the task's start, for the time left

    def post_task_event(self, event: object, host: str | None = None) -> None:
        """An event of the task's worker, as its own message (`ui.task_messages`), if the screen shows it."""
        message = task_message(event, host)
        if message is not None:
            self.post_message(message)

    def step_words(self, index: int, total: int, what: str, *, done: float | None = None) -> str:
        """"[3/6] steps=3 · about 2 min 10 s left": which step of how many, at the pace of the steps done
        (`done`: the steps done counting a part of this one, so the first step has an estimate before it ends)."""
        eta = eta_words(index if done is None else done, total, time.monotonic() - self.started)
        return f"[{index + 1}/{total}] {what}" + (f" · {eta}" if eta else "")

    def show_status(self, line: str) -> None:
        """The status line anew, without a line in the task's log (a refreshed estimate)."""
        self.query_one(f"#{self.TASK}-status", Static).update(line)

    def say(self, line: str) -> None:
        self.log_lines.append(line)
        self.query_one(f"#{self.TASK.replace(' ', '-')}-status", Static).update(line)

    def show_result(self, text: str) -> None:
        self.query_one(f"#{self.TASK.replace(' ', '-')}-result", Static).update(text)

    @on(TaskFailed)
    def _task_failed(self, message: TaskFailed) -> None:
        self.running = False
        self.say(f"The {self.TASK} stopped: {message.reason}")
        self.show_result(self.failed_words(message.reason))

    @on(TaskCancelled)
    def _task_cancelled(self, _: TaskCancelled) -> None:
        self.running = False
        self.say(f"{self.TASK} cancelled")  # the status line said the restore's "restoring…" for good
        self.show_result(self.cancelled_words())
        self.show_cancelled()

    def show_cancelled(self) -> None:
        """What a task's own rows show once it is cancelled (a sweep's value cut short); nothing by default."""

    def failed_words(self, reason: str) -> str:
        """The result text of a task stopped by an error (a task that pushes nothing says so instead)."""
        return (f"{self.TASK.capitalize()} failed: {reason}\nThe unit that ran before the {self.TASK} "
                "was restored where the host allowed it; check the Health tab. Press escape to go back.")

    def cancelled_words(self) -> str:
        return (f"{self.TASK.capitalize()} cancelled. The unit that ran before the {self.TASK} was put back. "
                "Press escape to go back.")

    def action_close(self) -> None:
        if self.running:
            self.cancelling = True
            self.say(f"cancelling: the {self.TASK} puts back the unit that ran before…")
            self.workers.cancel_group(self, self.TASK)
            return
        self.dismiss(self.outcome)
