"""The session side of the panel, a collaborator of `SpecdecApp`: `o` saved sessions, `v` compare, `S` sweep,
`R` replay, and showing a stored trial (bench table, chart, unit) when one is selected — offline as live.

It is handed the panel as `SessionPanel`, the members it uses and nothing else (the app is one; this module never
imports ui/app.py: tests/test_ui_helpers_no_app.py); the sweep and replay themselves run in the trial loop
(`loop.sweep`, `loop.replay`), which owns the host.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual.binding import BindingType

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.session import Session
from specdec_tui.loop.states import Busy
from specdec_tui.ui.panel_port import PanelPort

if TYPE_CHECKING:
    from textual.screen import Screen

    from specdec_tui.core.config import Config
    from specdec_tui.loop.sweep_form import SweepForm
    from specdec_tui.loop.sweep_plan import SweepPlan


class SessionPanel(PanelPort, Protocol):
    """What the session side reads and calls of the panel (`SpecdecApp` is one): `PanelPort`'s members and these."""

    config: Config

    @property
    def has_host(self) -> bool: ...
    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    def show_trials(self) -> None: ...
    def open_offline_session(self, session: Session, path: Path) -> None: ...

# The session screens (and the sweep, replay and chart modules behind them) are imported where a key opens
# one, not with the panel: none of them is on the first frame (issue 16, cold start).


def session_scopes() -> dict[str, Iterable[BindingType]]:
    """The session screens' keys, for the help screen."""
    from specdec_tui.ui.screens.compare_screen import CompareScreen
    from specdec_tui.ui.screens.rate_search_screen import RateSearchScreen
    from specdec_tui.ui.screens.replay_screen import ReplayScreen
    from specdec_tui.ui.screens.sessions_screen import SessionsScreen
    from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
    from specdec_tui.ui.screens.sweep_screen import SweepScreen
    from specdec_tui.ui.screens.tune_screen import TuneScreen

    return {"Sessions": SessionsScreen.BINDINGS, "Compare": CompareScreen.BINDINGS,
            "Sweep form": SweepFormScreen.BINDINGS, "Sweep": SweepScreen.BINDINGS, "Replay": ReplayScreen.BINDINGS,
            "Tune": TuneScreen.BINDINGS, "Rate search": RateSearchScreen.BINDINGS}


class SessionSide:
    def __init__(self, app: SessionPanel) -> None:
        self.app = app
        self.open_sessions_from: Path | None = None  # set before run: start on the sessions list of this folder
        self.last_sweep_form: SweepForm | None = None  # the sweep form as last left, shown again when it reopens

    def start(self) -> None:
        """Called once the main screen is up: show the session's last trial (its levels in the Bench tab, beside
        the chart that draws it; a continued session's table said "No benchmark yet"); open the list when asked."""
        app = self.app
        if app.session.trials:
            # offline, the main screen was built with this trial's unit: it is not loaded again, so a later reload can
            # never overwrite an edit made right at start (its table and list cursor are all that is left to show)
            app.call_after_refresh(self.show_trial, app.session.trials[-1].id, False, False)
        if self.open_sessions_from is not None:
            app.call_after_refresh(self.open_list)

    def _on_session_screen(self) -> bool:
        """True while one of the session screens is up: their keys do not stack another one."""
        from specdec_tui.ui.screens.compare_screen import CompareScreen
        from specdec_tui.ui.screens.sessions_screen import SessionsScreen
        from specdec_tui.ui.screens.task_screen import TaskScreen
        from specdec_tui.ui.screens.tune_screen import TuneScreen

        return isinstance(self.app.screen, (SessionsScreen, CompareScreen, TaskScreen, TuneScreen))

    # -- o: saved sessions ----------------------------------------------------------------------
    def open_list(self) -> None:
        if self._on_session_screen():
            return
        from specdec_tui.ui.screens.sessions_screen import SessionsScreen

        self.app.push_screen(SessionsScreen(self.open_sessions_from or sessions_dir()), self._session_chosen)

    async def _session_chosen(self, path: Path | None) -> None:
        if path is None:
            return
        from specdec_tui.loop.sessions import SessionOpenError, open_offline

        app = self.app
        try:
            session = open_offline(path)
        except SessionOpenError as err:
            app.notify(str(err), title="Cannot open this session", severity="error")
            return
        if app.has_host:  # live: browse it beside the running panel, never replace the live session
            if len(session.trials) < 2:
                app.notify(f"{path.name} has {len(session.trials)} trial(s): nothing to compare. "
                           "Start the panel with --session FILE (no --host) to browse it.", severity="warning")
                return
            self._push_compare(session, session.trials[-2].id, session.trials[-1].id)
            return
        app.open_offline_session(session, path)
        if session.trials:
            await self.show_trial(session.trials[-1].id, False)
        app.notify(f"Opened {path.name} offline: {len(session.trials)} trial(s). v compares, enter on a trial shows it.")

    # -- showing a stored trial ------------------------------------------------------------------
    async def show_trial(self, trial_id: int, announce: bool = True, load_unit: bool = True) -> None:
        """The trial's levels in the bench table (deltas against the trial before it) and, offline with
        `load_unit`, its unit in the Config tab (never over a dirty edit); `announce` says what changed."""
        from specdec_tui.core.compare import flag_diff, shown_label
        from specdec_tui.core.latency import trial_limit

        app = self.app
        main = app.main_or_none
        trials = list(app.session.trials)
        index = next((i for i, t in enumerate(trials) if t.id == trial_id), None)
        if index is None or main is None:
            return
        trial = trials[index]
        previous = trials[index - 1] if index > 0 else None
        if not app.bench_running:  # a live run owns the table while it runs
            main.bench_table.show_results(list(trial.levels), list(previous.levels) if previous else None,
                                          limit=trial_limit(trial), of=f"#{trial.id} {shown_label(trial, previous)}",
                                          slo=trial.profile.slo)
        if load_unit and not app.has_host and trial.unit_text:
            pane = await app.edit_pane()
            if pane is not None and pane.running_text != trial.unit_text:  # an offline edit (nothing to push it to) is kept
                await pane.load_running(trial.unit_text, keep_edit=pane.dirty)
        if not announce:  # shown on open, not picked: put the trials list's cursor on it (v compares it)
            table = main.trials_list.table
            if table.row_count > index:
                table.move_cursor(row=index)
            return
        changes = "; ".join(d.describe() for d in flag_diff(previous.flags, trial.flags)) if previous else "first trial"
        app.notify(f"{changes or 'no flag change'} (v compares in full)", title=f"trial {trial.id} {shown_label(trial)}")

    # -- v: compare ------------------------------------------------------------------------------
    def selected_trial_id(self) -> int | None:
        main = self.app.main_or_none
        if main is None or not main.tabs_mounted:  # v right at start: the newest trial
            return None
        trials_list = main.trials_list
        ids = trials_list.trial_ids
        if not ids:
            return None
        row = trials_list.table.cursor_row
        return ids[row] if 0 <= row < len(ids) else ids[-1]

    def compare(self) -> None:
        app = self.app
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

        self.app.push_screen(CompareScreen(session, a_id, b_id))

    # -- S: sweep, R: replay ---------------------------------------------------------------------
    def _refuse_task(self, what: Busy) -> bool:
        app = self.app
        if app.trial_loop is None:
            app.notify(f"This is an offline session: a {what.value} needs a host. Start with --host NAME (or --demo).",
                       severity="warning")
            return True
        why = app.trial_loop.refusal(what)
        if why is not None:
            app.notify(why, severity="warning")
            return True
        if app.has_unpushed_edit:
            app.notify(f"You have an unpushed edit. Push it or undo it before a {what.value}: the {what.value} starts "
                       "from the unit running on the host.", severity="warning")
            return True
        return False

    def sweep(self) -> None:
        app = self.app
        if self._on_session_screen() or self._refuse_task(Busy.SWEEP):
            return
        from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
        from specdec_tui.ui.screens.sweep_screen import SweepScreen

        form = SweepFormScreen(app.config.profile(), configured=sorted(app.config.hosts), active=app.host_name,
                               last=self.last_sweep_form)

        def start(plan: SweepPlan | None) -> None:
            self.last_sweep_form = form.left or self.last_sweep_form  # shown as it was left, the next time
            if plan is None or self._refuse_task(Busy.SWEEP) or app.trial_loop is None:
                return
            app.push_screen(SweepScreen(app.trial_loop, plan, config=app.config), self._task_closed)

        app.push_screen(form, start)

    def replay(self) -> None:
        app = self.app
        if self._on_session_screen() or self._refuse_task(Busy.REPLAY):
            return
        from specdec_tui.loop.replay import nothing_to_replay, replayable
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
        from specdec_tui.ui.screens.replay_screen import ReplayScreen
        todo = replayable(app.session)
        if not todo:
            app.notify(nothing_to_replay(app.session), severity="warning")
            return

        def start(yes: bool | None) -> None:
            if yes and not self._refuse_task(Busy.REPLAY) and app.trial_loop is not None:
                app.push_screen(ReplayScreen(app.trial_loop, app.session), self._task_closed)

        app.push_screen(ConfirmScreen(
            f"Replay {len(todo)} trial(s) on {app.host_name}? Each one pushes its unit and restarts the server; "
            "the unit running now is put back at the end.", yes="Replay"), start)

    def tune(self) -> None:
        """T: the Tune screen on the panel's host; `a` there dismisses with the choice's unit, pushed the
        ordinary way (u rolls it back)."""
        app = self.app
        if self._on_session_screen() or self._refuse_task(Busy.TUNE) or app.trial_loop is None:
            return
        from specdec_tui.ui.screens.tune_screen import TuneScreen

        screen = TuneScreen(app.trial_loop, config=app.config)

        def closed(unit: object) -> None:
            self._task_closed(unit)
            if isinstance(unit, str) and app.link is not None:
                # made against the unit the tune started from (and put back): changed on the host since, by
                # another terminal, nothing is pushed and the panel asks (issue 35)
                app.link.push(unit, expected=screen.base_text or None, what="The tune's choice")

        app.push_screen(screen, closed)

    def rate_search(self) -> None:
        """M: the load form (the SLO is required), then the rate-search screen on the unit running now."""
        app = self.app
        if self._on_session_screen() or self._refuse_task(Busy.RATE_SEARCH) or app.trial_loop is None:
            return
        from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
        from specdec_tui.ui.screens.rate_search_screen import RateSearchScreen

        def start(profile: BenchProfile | None) -> None:
            if profile is None or self._refuse_task(Busy.RATE_SEARCH) or app.trial_loop is None:
                return
            if not profile.slo:
                app.notify("The rate search needs an SLO, e.g. ttft_p99=2s, itl_p99=50ms: press M again and fill "
                           "the SLO field.", severity="warning", title="No SLO")
                return
            app.push_screen(RateSearchScreen(app.trial_loop, profile), self._task_closed)

        app.push_screen(BenchFormScreen(app.trial_loop.profile, purpose="rate search"), start)

    def task_blocks_quit(self) -> bool:
        """A running sweep or replay must end by itself or by its cancel (which restores the unit): quitting
        under it could leave the host on a value that was being tried. Says so and returns True."""
        from specdec_tui.ui.screens.task_screen import TaskScreen
        from specdec_tui.ui.screens.tune_screen import TuneScreen

        app = self.app
        running = next((s for s in app.screen_stack if isinstance(s, (TaskScreen, TuneScreen)) and s.running), None)
        if running is None:
            return False
        if running.cancelling:  # escape was pressed: saying to press it again would be wrong
            app.notify(f"The cancelled {running.TASK} is putting back the unit that ran before; quit once it says it "
                       f"has.", severity="warning", title="Not quitting yet")
        else:
            app.notify(f"A {running.TASK} is running. Press escape on it to cancel (it puts back the unit that ran "
                       f"before), then quit.", severity="warning", title="Not quitting yet")
        return True

    def _task_closed(self, _outcome: object) -> None:
        self.app.show_trials()
        if self.app.link is not None:
            self.app.link.reload_unit()
