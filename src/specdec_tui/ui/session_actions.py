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
        from specdec_tui.paths import sessions_dir
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
        except FormError as err:
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
        from specdec_tui.replay import replayable
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
