"""What the sweep and replay screens share: the messages their workers post, a status line, a result text,
and escape that cancels a running task first (the loop restores the unit) and closes after."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static


@dataclass
class TaskEvent(Message):
    """One event of a sweep or replay (sweep.*/replay.* events, workflow.Phase, bench LevelDone...)."""

    event: object


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


class TaskScreen(Screen[object]):
    """What the sweep and replay screens share: a status line, a result text, the worker group `TASK`,
    and escape that cancels a running task first (the task module restores the unit) and closes after."""

    TASK = "task"

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.outcome: object = None
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
