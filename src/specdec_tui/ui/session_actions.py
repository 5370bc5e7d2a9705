"""The session side of the panel: the messages the sweep/replay workers post, the screen they share, and
the `o`/`v`/`S`/`R` actions. The session index and the sweep form's parsing live in `loop`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from specdec_tui.core.session import Session
from specdec_tui.loop.sessions import SessionOpenError, open_offline

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


# ---------------------------------------------------------------------------------------------- the app side


class SessionActions:
    """The session side of `SpecdecApp` (mixed in): `o` saved sessions, `v` compare, `S` sweep, `R` replay,
    and showing a stored trial (bench table, chart, unit) when one is selected — offline as live.

    Uses only the app's public state (host, session, session_path, busy, bench_worker, runner()) and its
    display feed (`_show_trials`, `_call_widget`), so the shell keeps one owner of that state."""

    open_sessions_from: Path | None = None  # set before run: start on the sessions list of this folder

    # -- start ------------------------------------------------------------------------------------
    def start_session_side(self) -> None:
        """Called once the main screen is up: offline, show the last trial; open the list when asked."""
        app: Any = self
        if app.host is None and app.session.trials:
            # the main screen was built with this trial's unit: load it once, so a later reload can never
            # overwrite an edit made right at start (its table and list cursor are all that is left to show)
            app.call_after_refresh(self.show_trial, app.session.trials[-1].id, False, False)
        if self.open_sessions_from is not None:
            app.call_after_refresh(self.action_sessions)

    def _on_session_screen(self) -> bool:
        """True while one of the session screens is up: their keys do not stack another one."""
        from specdec_tui.ui.screens.compare_screen import CompareScreen
        from specdec_tui.ui.screens.sessions_screen import SessionsScreen

        app: Any = self
        return isinstance(app.screen, (SessionsScreen, CompareScreen, TaskScreen))

    # -- o: saved sessions ----------------------------------------------------------------------
    def action_sessions(self) -> None:
        from specdec_tui.core.paths import sessions_dir
        from specdec_tui.ui.screens.sessions_screen import SessionsScreen

        app: Any = self
        if self._on_session_screen():
            return
        app.push_screen(SessionsScreen(self.open_sessions_from or sessions_dir()), self._session_chosen)

    async def _session_chosen(self, path: Path | None) -> None:
        if path is None:
            return
        app: Any = self
        try:
            session = open_offline(path)
        except SessionOpenError as err:
            app.notify(str(err), title="Cannot open this session", severity="error")
            return
        if app.host is not None:  # live: browse it beside the running panel, never replace the live session
            if len(session.trials) < 2:
                app.notify(f"{path.name} has {len(session.trials)} trial(s): nothing to compare. "
                           "Start the panel with --session FILE (no --host) to browse it.", severity="warning")
                return
            self._push_compare(session, session.trials[-2].id, session.trials[-1].id)
            return
        app.session, app.session_path = session, path
        app.host_name = session.host or "offline"
        app.unit_name = session.unit or app.unit_name
        app.sub_title = f"offline · {app.host_name} · {path.name}"
        app._show_trials()
        if session.trials:
            await self.show_trial(session.trials[-1].id, False)
        app.notify(f"Opened {path.name} offline: {len(session.trials)} trial(s). v compares, enter on a trial shows it.")

    # -- showing a stored trial ------------------------------------------------------------------
    async def on_trials_list_selected(self, message: Any) -> None:
        await self.show_trial(message.trial_id, True)

    async def show_trial(self, trial_id: int, announce: bool = True, load_unit: bool = True) -> None:
        """The trial's levels in the bench table (deltas against the trial before it) and, offline with
        `load_unit`, its unit in the Config tab (never over a dirty edit); `announce` says what changed."""
        from specdec_tui.core.compare import flag_diff, trial_label

        app: Any = self
        trials = list(app.session.trials)
        index = next((i for i, t in enumerate(trials) if t.id == trial_id), None)
        if index is None:
            return
        trial = trials[index]
        previous = trials[index - 1] if index > 0 else None
        if app.bench_worker is None:  # a live run owns the table while it runs
            app._call_widget("bench-table", "show_results", list(trial.levels), list(previous.levels) if previous else None)
        if load_unit and app.host is None and app.main_or_none is not None and trial.unit_text:
            pane = app.config_pane
            if pane.running_text != trial.unit_text:  # an offline edit (nothing to push it to) is kept
                await pane.load_running(trial.unit_text, keep_edit=pane.dirty)
        if not announce:  # shown on open, not picked: put the trials list's cursor on it (v compares it)
            found = app.main_or_none.query("#trials-list") if app.main_or_none is not None else None
            table = getattr(found.first(), "table", None) if found else None
            if table is not None and table.row_count > index:
                table.move_cursor(row=index)
        if announce:
            changes = "; ".join(d.describe() for d in flag_diff(previous.flags, trial.flags)) if previous else "first trial"
            app.notify(f"{changes or 'no flag change'} (v compares in full)", title=f"trial {trial.id} {trial_label(trial)}")

    # -- v: compare ------------------------------------------------------------------------------
    def selected_trial_id(self) -> int | None:
        app: Any = self
        main = app.main_or_none
        found = main.query("#trials-list") if main is not None else None
        trials_list = found.first() if found else None
        ids = getattr(trials_list, "trial_ids", [])
        if not ids:
            return None
        row = trials_list.table.cursor_row
        return ids[row] if 0 <= row < len(ids) else ids[-1]

    def action_compare(self) -> None:
        app: Any = self
        if self._on_session_screen():
            return
        ids = [t.id for t in app.session.trials]
        if len(ids) < 2:
            app.notify("Compare needs two trials; this session has "
                       f"{len(ids)}. Push and benchmark another setting, or press o to open a saved session.",
                       severity="warning")
            return
        b_id = self.selected_trial_id() or ids[-1]
        i = ids.index(b_id) if b_id in ids else len(ids) - 1
        i = max(i, 1)  # the first trial is compared with the second
        self._push_compare(app.session, ids[i - 1], ids[i])

    def _push_compare(self, session: Session, a_id: int, b_id: int) -> None:
        from specdec_tui.ui.screens.compare_screen import CompareScreen

        app: Any = self
        app.push_screen(CompareScreen(session, a_id, b_id))

    # -- S: sweep, R: replay ---------------------------------------------------------------------
    def _refuse_task(self, what: str) -> bool:
        app: Any = self
        if app.host is None:
            app.notify(f"This is an offline session: a {what} needs a host. Start with --host NAME (or --demo).",
                       severity="warning")
            return True
        if app.busy or app.bench_worker is not None:
            app.notify(f"Wait for the {app.busy or 'benchmark'} to finish before a {what}.", severity="warning")
            return True
        if app.main_or_none is not None and app.config_pane.dirty:
            app.notify(f"You have an unpushed edit. Push it or undo it before a {what}: the {what} starts from the "
                       "unit running on the host.", severity="warning")
            return True
        return False

    def action_sweep(self) -> None:
        from specdec_tui.ui.screens.sweep_screen import SweepFormScreen, SweepScreen

        app: Any = self
        if self._on_session_screen() or self._refuse_task("sweep"):
            return

        def start(plan: Any) -> None:
            if plan is None or self._refuse_task("sweep"):
                return
            app.busy = "sweep"
            app.push_screen(SweepScreen(app.runner(), plan), self._task_closed)

        app.push_screen(SweepFormScreen(app.config.profile()), start)

    def action_replay(self) -> None:
        from specdec_tui.loop.replay import replayable
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
        from specdec_tui.ui.screens.replay_screen import ReplayScreen

        app: Any = self
        if self._on_session_screen() or self._refuse_task("replay"):
            return
        todo = replayable(app.session)
        if not todo:
            app.notify("Nothing to replay: the session has no trial with a unit.", severity="warning")
            return

        def start(yes: bool | None) -> None:
            if yes and not self._refuse_task("replay"):
                app.busy = "replay"
                app.push_screen(ReplayScreen(app.runner(), app.session), self._task_closed)

        app.push_screen(ConfirmScreen(
            f"Replay {len(todo)} trial(s) on {app.host_name}? Each one pushes its unit and restarts the server; "
            "the unit running now is put back at the end.", yes="Replay"), start)

    def task_blocks_quit(self) -> bool:
        """A running sweep or replay must end by itself or by its cancel (which restores the unit): quitting
        under it could leave the host on a value that was being tried. Says so and returns True."""
        app: Any = self
        running = next((s for s in app.screen_stack if isinstance(s, TaskScreen) and s.running), None)
        if running is None:
            return False
        app.notify(f"A {running.TASK} is running. Press escape on it to cancel (it puts back the unit that ran "
                   f"before), then quit.", severity="warning", title="Not quitting yet")
        return True

    def _task_closed(self, _outcome: Any) -> None:
        app: Any = self
        app.busy = None
        app._show_trials()
        self.reload_running_unit()

    def reload_running_unit(self) -> None:
        """After a sweep or replay: the Config tab follows the unit the host runs now."""
        app: Any = self

        async def read() -> None:
            from specdec_tui.hosts.base import HostError
            from specdec_tui.ui import messages as m

            try:
                text = await app.host.read_unit()
            except HostError as err:
                app.post_message(m.StepFailed("connect", in_words(err)))
                return
            app.post_message(m.UnitLoaded(text))

        app.run_worker(read(), group="reload-unit", exclusive=True)
