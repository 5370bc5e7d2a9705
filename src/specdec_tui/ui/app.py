"""The panel: `SpecdecApp` and its factory `make_app`.

Workers (`@work`, in `ui.host_workers.HostWorkers`) talk to the host, the workflow and the benchmark and
only post `ui.messages`; the `@on` handlers here own all state (the running unit, the busy step, the
current trial) and update widgets. Failures are shown in words; a failed push keeps the edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.widgets import Input, Select, Tabs, TextArea
from textual.worker import Worker

from specdec_tui.bench.events import LevelDone, RunDone
from specdec_tui.core import drafts
from specdec_tui.core.config import Config
from specdec_tui.core.session import Session, Trial, save_session, utcnow
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import Host, HostError
from specdec_tui.ui import messages as m
from specdec_tui.ui.commands import SpecdecCommands
from specdec_tui.ui.host_workers import HostWorkers
from specdec_tui.ui.keymap import APP_BINDINGS, KeyRow, key_rows, unknown_ids
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.error_screen import ErrorScreen
from specdec_tui.ui.screens.help_screen import HelpScreen
from specdec_tui.ui.screens.main_screen import MainScreen
from specdec_tui.ui.session_actions import SessionActions
from specdec_tui.ui.themes import apply_theme, problems_message, register_themes
from specdec_tui.ui.widgets.config_pane import ConfigPane


def _in_words(err: BaseException) -> str:
    """An exception as a sentence for the user (HostError already carries what to do)."""
    text = str(err).strip()
    return text or type(err).__name__


# escape must stop a running benchmark whatever has focus (a text field, the editor, a table): a
# priority binding, enabled only while a benchmark runs (`check_action`), so otherwise escape keeps
# its usual meaning (leave a field, close the journal filter or a dialog).
CANCEL_BENCH = Binding("escape", "cancel_bench", "Cancel bench", show=False, priority=True, id="cancel-bench")


class SpecdecApp(SessionActions, HostWorkers, App[None]):  # SessionActions: o sessions, v compare, S sweep, R replay; HostWorkers: the @work workers
    CSS_PATH = "app.tcss"
    TITLE = "specdec-tui"
    BINDINGS: list[BindingType] = [*APP_BINDINGS, CANCEL_BENCH]
    COMMANDS = App.COMMANDS | {SpecdecCommands}

    def __init__(
        self,
        config: Config,
        host: Host | None,
        session: Session,
        *,
        session_path: Path | None,
        host_name: str | None = None,
    ) -> None:
        super().__init__()
        # An operator's panel: tab switches and overlays appear at once (the tab-underline animation alone
        # repainted the screen ~16 times and made a tab switch take ~0.5 s on a loaded 2-core machine).
        self.animation_level = "none"
        self.config = config
        self.host = host
        self.session = session
        self.session_path = session_path
        self.host_name = host_name or (host.info.name if host else session.host or "offline")
        self.unit_name = host.info.unit if host else (session.unit or "sglang.service")
        self.effective_keymap: dict[str, str] = dict(config.ui.keymap)
        self.busy: str | None = None  # the host step running now ("push", "restart", ...), one at a time
        self.bench_worker: Worker[None] | None = None
        self.bench_run = 0  # number of the latest benchmark run; events of older runs are dropped
        self.trial: Trial | None = None  # the trial being measured (pushed, not yet recorded)
        self.health: Any = None  # last health.HealthSnapshot
        self._draft_offered = False
        self._quit_question: ConfirmScreen | None = None
        self._runner: Any = None
        self.log_stats = LogStats()
        self.sub_title = f"{self.host_name} · {self.unit_name}" if host else f"offline · {self.host_name}"

    # -- start ---------------------------------------------------------------------------------
    def on_mount(self) -> None:
        loaded = register_themes(self)
        if loaded.problems:
            self.notify(problems_message(loaded.problems), title="Themes", severity="warning", timeout=10)
        problem = apply_theme(self, self.config.ui.theme)
        if problem:
            self.notify(problem, severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_keymap(self.effective_keymap)
        bad = unknown_ids(self.effective_keymap, self.binding_scopes().values())
        if bad:
            self.notify(f"[ui.keymap] names no such binding: {', '.join(bad)}. See ? for the ids.", severity="warning")
        running = "" if self.host else (self.session.trials[-1].unit_text if self.session.trials else "")
        draft_key = (self.host_name, self.unit_name) if self.host else None
        self.push_screen(MainScreen(running_text=running, draft_key=draft_key, journal_lines=self.config.ui.journal_lines))
        self.call_after_refresh(self._show_trials)
        self.start_session_side()
        if self.host is not None:
            self.connect_host()

    async def on_unmount(self) -> None:
        if self.host is not None:
            try:
                await self.host.close()
            except HostError:
                pass  # leaving anyway; nothing the user can do about a close that failed

    @property
    def main_or_none(self) -> MainScreen | None:
        """The main screen, or None before it is pushed / while the app shuts down."""
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    @property
    def main(self) -> MainScreen:
        main = self.main_or_none
        if main is None:
            raise LookupError("the main screen is not up")
        return main

    @property
    def config_pane(self) -> ConfigPane:
        return self.main.config_pane

    def binding_scopes(self) -> dict[str, Iterable[BindingType]]:
        """Every BINDINGS the help screen lists, by where they apply."""
        from specdec_tui.ui.screens.compare_screen import CompareScreen
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen as _C
        from specdec_tui.ui.screens.error_screen import ErrorScreen as _E
        from specdec_tui.ui.screens.replay_screen import ReplayScreen
        from specdec_tui.ui.screens.sessions_screen import SessionsScreen
        from specdec_tui.ui.screens.sweep_screen import SweepFormScreen, SweepScreen

        return {"App": type(self).BINDINGS, "Main": MainScreen.BINDINGS, "Help": HelpScreen.BINDINGS, "Confirm": _C.BINDINGS, "Error": _E.BINDINGS,
                "Sessions": SessionsScreen.BINDINGS, "Compare": CompareScreen.BINDINGS, "Sweep form": SweepFormScreen.BINDINGS,
                "Sweep": SweepScreen.BINDINGS, "Replay": ReplayScreen.BINDINGS}

    def help_rows(self) -> list[KeyRow]:
        return key_rows(self.binding_scopes(), self.effective_keymap)

    def runner(self) -> Any:
        """The workflow's TrialRunner for this host (built on first use)."""
        if self._runner is None:
            from specdec_tui.loop.trial import TrialRunner

            self._runner = TrialRunner.for_host(
                self.host, self.config, self.session, host_name=self.host_name, session_path=self.session_path, profile=self.config.profile()
            )
        return self._runner

    # -- handlers: own the state ---------------------------------------------------------------
    @on(m.UnitLoaded)
    async def _unit_loaded(self, message: m.UnitLoaded) -> None:
        if self.main_or_none is None:
            return  # arrived while the app shuts down
        pane = self.config_pane
        await pane.load_running(message.text, keep_edit=pane.dirty)
        if not self._draft_offered:
            self._draft_offered = True
            self._offer_draft(message.text)

    def _offer_draft(self, running: str) -> None:
        draft = drafts.load_draft(self.host_name, self.unit_name)
        if draft is None or draft == running:
            return

        async def answer(restore: bool | None) -> None:
            if restore:
                await self.config_pane.set_text(draft)
                self.notify("Draft restored: the diff shows what a push would change.")
            else:
                drafts.clear_draft(self.host_name, self.unit_name)

        self.push_screen(
            ConfirmScreen(f"An unpushed edit of {self.unit_name} on {self.host_name} was saved earlier.\nRestore it?", yes="Restore", no="Discard"),
            answer,
        )

    @on(m.ServiceInactive)
    def _service_inactive(self, _: m.ServiceInactive) -> None:
        if self.busy or self.main_or_none is None:
            return  # the user already started something (or the app is closing)
        self.busy = "start"
        self._journal_marker("demo service was not running: starting it")
        self.notify("The demo server was not running; starting it. Health shows starting → loading → ready.")
        self.restart_only()

    @on(m.StepFailed)
    def _step_failed(self, message: m.StepFailed) -> None:
        if message.what in ("push", "restart", "healthy", "rollback"):
            self.busy = None
        if message.what == "bench":
            self.bench_worker = None
        if self.trial is not None and message.what in ("restart", "healthy"):
            self.trial.status, self.trial.failure = "failed", f"{message.what}: {message.reason}"
            self._record_trial()
        self._journal_marker(f"{message.what} failed")
        kept = " Your edit is kept; fix it and press p again." if message.what == "push" else ""
        if message.what in ("push", "restart", "healthy", "rollback", "connect"):
            self.push_screen(ErrorScreen(f"{message.what.capitalize()} failed", message.reason + kept))
        else:
            self.notify(message.reason, title=f"{message.what} failed", severity="error")

    @on(m.Pushed)
    async def _pushed(self, message: m.Pushed) -> None:
        if self.main_or_none is None:
            return  # arrived while the app shuts down
        pane = self.config_pane
        await pane.load_running(message.text, keep_edit=pane.text != message.text)
        drafts.clear_draft(self.host_name, self.unit_name)
        self.trial = self.runner().start_trial(message.text)
        self.trial.pushed_at = utcnow()
        self._journal_marker(f"pushed trial {self.trial.id} {self.trial.label}".rstrip())
        self._show_trials()
        self.notify(f"Pushed {self.unit_name}; restarting…")

    @on(m.Restarted)
    def _restarted(self, message: m.Restarted) -> None:
        self._journal_marker(f"restart: {message.result.job_result}")

    @on(m.Healthy)
    def _healthy(self, message: m.Healthy) -> None:
        if self.main_or_none is None:
            return  # arrived while the app shuts down
        self.busy = None
        if self.trial is not None:
            self.trial.facts = message.facts
            self.runner().record(self.trial)
        self._journal_marker("healthy")
        self.notify("Server is healthy." + ("" if self.config.ui.auto_bench else " Press b to benchmark."))
        if self.config.ui.auto_bench:
            self.action_bench()

    @on(m.RolledBack)
    async def _rolled_back(self, message: m.RolledBack) -> None:
        if self.main_or_none is None:
            return  # arrived while the app shuts down
        await self.config_pane.load_running(message.text)
        self._journal_marker("rolled back")
        self.notify("Rolled back to the previous unit; restarting…")

    @on(m.HealthChanged)
    def _health_changed(self, message: m.HealthChanged) -> None:
        self.health = message.snapshot
        self._call_widgets(".health-view", "update_health", message.snapshot)

    @on(m.JournalBatch)
    def _journal(self, message: m.JournalBatch) -> None:
        self._call_widget("journal-pane", "add_records", message.records, message.kinds)

    @on(m.LogStatsChanged)
    def _log_stats_changed(self, message: m.LogStatsChanged) -> None:
        self.log_stats = message.stats
        self._call_widgets(".health-view", "update_log_stats", message.stats)

    @on(m.BenchEventMessage)
    def _bench_event(self, message: m.BenchEventMessage) -> None:
        if message.run != self.bench_run or self.bench_worker is None:
            return  # queued before a cancel: the table already says "cancelled"
        self._call_widget("bench-table", "apply_event", message.event)
        if isinstance(message.event, LevelDone) and self.trial is not None:
            self.trial.levels.append(message.event.result)
            self.runner().record(self.trial)
            self._show_trials()

    @on(m.BenchFinished)
    def _bench_finished(self, message: m.BenchFinished) -> None:
        if message.run != self.bench_run or self.bench_worker is None:
            return  # a cancelled run ending: the cancel already recorded it
        self.bench_worker = None
        if self.trial is not None and self.trial.status == "running":
            self.trial.status = "cancelled" if message.cancelled else "ok"
            self._record_trial()
        self.notify("Benchmark cancelled." if message.cancelled else "Benchmark done; trial recorded.")

    @on(m.TrialRecorded)
    def _trial_recorded(self, _: m.TrialRecorded) -> None:
        self._show_trials()

    def _record_trial(self) -> None:
        trial, self.trial = self.trial, None
        if trial is None:
            return
        try:
            self.runner().record(trial)
        except Exception as err:  # noqa: BLE001
            self.notify(f"Could not save the trial: {_in_words(err)}", severity="error")
        self.post_message(m.TrialRecorded(trial))

    def _journal_marker(self, text: str) -> None:
        self._call_widget("journal-pane", "add_marker", text)

    def _show_trials(self) -> None:
        self._call_widget("trials-list", "set_trials", list(self.session.trials))
        series = [(t.label or f"trial {t.id}", list(t.levels)) for t in self.session.trials if t.levels]
        self._call_widget("tok-chart", "set_trials", series)

    def _call_widget(self, widget_id: str, method: str, *args: Any) -> None:
        """Feed a display widget if it is built and has that method (placeholders have none)."""
        self._call_widgets(f"#{widget_id}", method, *args)

    def _call_widgets(self, selector: str, method: str, *args: Any) -> None:
        """Feed every display widget matching `selector` (the health pane has a tab and a side copy)."""
        main = self.main_or_none
        if main is None:
            return  # a late message while the app shuts down
        for widget in main.query(selector):
            target = getattr(widget, method, None)
            if callable(target):
                target(*args)

    def _theme_changed(self, theme: Any) -> None:
        if not self.config.source:
            return
        from specdec_tui.core import config_file as config_module

        save = getattr(config_module, "save_ui_theme", None)
        if save is None:
            return
        try:
            save(Path(self.config.source), theme.name)
        except Exception as err:  # noqa: BLE001
            self.notify(f"Theme not saved to {self.config.source}: {_in_words(err)}", severity="warning")

    # -- actions --------------------------------------------------------------------------------
    def _refuse_offline(self) -> bool:
        if self.host is None:
            self.notify("This is an offline session: there is no host to act on. Start with --host NAME.", severity="warning")
            return True
        if self.busy:
            self.notify(f"Wait for the {self.busy} to finish.", severity="warning")
            return True
        return False

    def action_push(self) -> None:
        if self._refuse_offline():
            return
        pane = self.config_pane
        if pane.errors:
            listed = "; ".join(i.message for i in pane.errors)
            self.notify(f"Push refused: {len(pane.errors)} error(s) in the flags: {listed}. Fix them first (f applies a suggested fix).", severity="error", title="Push refused")
            return
        if not pane.dirty:
            self.notify("Nothing to push: the edit matches the unit on the host. Press r to restart anyway.", severity="warning")
            return

        def go(yes: bool | None = True) -> None:
            if not yes:
                return
            self.action_cancel()
            self.busy = "push"
            self.push_and_restart(pane.text)

        if self.bench_worker is not None:
            self.push_screen(ConfirmScreen("A benchmark is running. Push (and restart, which stops the benchmark)?", yes="Push"), go)
        else:
            go()

    def action_restart(self) -> None:
        if self._refuse_offline():
            return
        self.busy = "restart"
        self._journal_marker("restart requested")
        self.restart_only()

    def action_rollback(self) -> None:
        if self._refuse_offline():
            return

        def go(yes: bool | None) -> None:
            if yes:
                self.busy = "rollback"
                self.rollback_unit()

        self.push_screen(ConfirmScreen(f"Roll {self.unit_name} back to the previous version on {self.host_name} and restart it?", yes="Roll back"), go)

    def action_bench(self) -> None:
        if self.host is None:
            self.notify("This is an offline session: there is nothing to benchmark.", severity="warning")
            return
        if self.bench_worker is not None:
            self.notify("A benchmark is already running (escape cancels it).", severity="warning")
            return
        if self.busy:
            self.notify(f"Wait for the {self.busy} to finish: the server is not ready to measure yet.", severity="warning")
            return
        if self.trial is None or self.trial.levels:  # benchmarking what runs now, without a new push
            self.trial = self.runner().start_trial(self.config_pane.running_text)
            if self.health is not None and getattr(self.health, "facts", None):
                self.trial.facts = self.health.facts
        previous = next((t.levels for t in reversed(self.session.trials) if t.levels and t is not self.trial), None)
        self._call_widget("bench-table", "start_run", list(self.config.profile().concurrency), previous)
        self.main.action_show_tab("bench")
        self.bench_run += 1
        self.bench_worker = self.run_bench(self.bench_run)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_bench":
            return self.bench_worker is not None and self.screen is self.main_or_none and not self._escape_is_local()
        return True

    def _escape_is_local(self) -> bool:
        """True when escape closes something under the cursor first: the journal filter or an open dropdown."""
        focused = self.focused
        if focused is None:
            return False
        for node in focused.ancestors_with_self:
            if isinstance(node, Select) and node.expanded:
                return True
            if node.id == "journal-pane" and node.has_class("-filtering"):
                return True
        return False

    def action_cancel_bench(self) -> None:
        self.action_cancel()

    def action_cancel(self) -> None:
        """Cancel the running benchmark; with none, leave the text field so single keys work again."""
        if self.bench_worker is None:
            if isinstance(self.focused, (Input, TextArea, Select)):
                self.main.query_one(Tabs).focus()
            return
        self.bench_worker.cancel()
        self.bench_worker = None
        table = self.main.query("#bench-table")
        done = list(getattr(table.first(), "results", {}).values()) if table else []
        self._call_widget("bench-table", "apply_event", RunDone(levels=done, cancelled=True))
        if self.trial is not None:
            self.trial.status = "cancelled"
            self._record_trial()
        self.notify("Benchmark cancelled.")

    def action_save_session(self) -> None:
        if self.session_path is None:
            self.notify("No session file: start with --session FILE to keep trials.", severity="warning")
            return
        try:
            save_session(self.session, self.session_path)
        except Exception as err:  # noqa: BLE001
            self.notify(f"Could not save the session: {_in_words(err)}", severity="error")
            return
        self.notify(f"Session saved to {self.session_path}.")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_rows()))

    async def action_quit(self) -> None:
        if self._quit_question is not None and self._quit_question in self.screen_stack:
            return  # already asking; answer that question
        if self.task_blocks_quit():
            return
        pane = self.config_pane
        pane.flush_draft()
        reasons = [r for r, on_ in (("an unpushed edit (kept as a draft)", pane.dirty), ("a running benchmark", self.bench_worker is not None)) if on_]
        if not reasons:
            self.exit()
            return

        def go(yes: bool | None) -> None:
            self._quit_question = None
            if yes:
                self.exit()

        self._quit_question = ConfirmScreen(f"Quit with {' and '.join(reasons)}?", yes="Quit")
        self.push_screen(self._quit_question, go)


def make_app(config: Config, host: Host | None, session: Session, *, session_path: Path | None) -> SpecdecApp:
    """Build the panel. `host` None opens the session offline (browse trials, no push)."""
    return SpecdecApp(config, host, session, session_path=session_path)
