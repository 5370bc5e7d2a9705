"""The panel: `SpecdecApp` and its factory `make_app`.

The trial loop (`loop.trial.TrialLoop`) owns every piece of trial state; `HostLink` runs its intents and the host's
journal and health in workers that only post messages; the `@on` handlers here render what arrives (the loop's
events: the main screen's, `LoopScreen`). `PanelState` (ui/panel_state.py) holds what the panel knows and reaches;
`PanelActions` (ui/panel_actions.py) holds its keys' actions; `SessionSide` owns the saved-sessions, compare, sweep
and replay screens. Failures are said in words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.filter import LineFilter
from textual.notifications import Notify
from textual.widgets import TabbedContent

from specdec_tui.core.config import Config
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.session import Session
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.states import Busy
from specdec_tui.ui import messages as m
from specdec_tui.ui.exit_hold import ExitHold
from specdec_tui.ui.first_trial_warmup import FirstTrialWarmup
from specdec_tui.ui.fleet_feed import FleetFeed
from specdec_tui.ui.gc_policy import HEAP_TICK_S, START_HOLD_MAX_S, HeapKeeper, resume_collections, settle_heap
from specdec_tui.ui.host_actions import HostActions
from specdec_tui.ui.input_order import InputInOrder
from specdec_tui.ui.keymap import APP_BINDINGS, keymap_problems
from specdec_tui.ui.panel_actions import PanelActions
from specdec_tui.ui.safe_lines import SafeLineFilters
from specdec_tui.ui.screens.main_screen import MainScreen
from specdec_tui.ui.session_side import SessionSide
from specdec_tui.ui.textual_compat import InputInOrderApp, css_updates, strips_freed_without_the_collector
from specdec_tui.ui.themes import apply_theme, problems_message, register_themes

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.command import Provider
    from textual.driver import Driver

    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.hosts.base import Host
    from specdec_tui.loop.events import LoopEvent
    from specdec_tui.loop.health import HealthSnapshot
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.ui.host_link import HostLink
    from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
    from specdec_tui.ui.session_load import SessionLoad
    from specdec_tui.ui.widgets.fleet_table import FleetTable
    from specdec_tui.ui.widgets.trials_list import TrialsList

# What only a key, a host or a later tab needs is imported where it is used: the first frame waits for every import
# made before it (issue 16, cold start; tests/test_cold_start_imports.py keeps the heavy ones off that path).

NOTICE_REPAINT_AFTER_S = 0.1  # after a notice's timeout: its toast is gone by then

# escape must stop a running benchmark whatever has focus (a text field, the editor, a table): a
# priority binding, enabled only while a benchmark runs (`check_action`), so otherwise escape keeps
# its usual meaning (leave a field, close the journal filter or a dialog).
CANCEL_BENCH = Binding("escape", "cancel_bench", "Stop bench in field", show=False, priority=True, id="cancel-bench")


def palette_commands() -> type[Provider]:
    """The command palette's provider, for `COMMANDS` (Textual calls it when the palette opens)."""
    from specdec_tui.ui.commands import SpecdecCommands

    return SpecdecCommands


class SpecdecApp(InputInOrderApp, PanelActions):
    CSS_PATH = "app.tcss"
    TITLE = "specdec-tui"
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS, CANCEL_BENCH]
    COMMANDS = App.COMMANDS | {palette_commands}  # the provider's module loads when the palette first opens

    def __init__(self, config: Config, host: Host | None, session: Session, *, session_path: Path | None,
                 host_name: str | None = None, unit_name: str | None = None,
                 open_host: Callable[[], Host] | None = None) -> None:
        """`host` None opens `session` offline, unless `open_host` is given: a host named `host_name` that runs
        `unit_name`, opened on first use (`host`), after the first frame."""
        super().__init__()
        self._line_filters = SafeLineFilters()
        # An operator's panel: tab switches and overlays appear at once (the tab-underline animation alone
        # repainted the screen ~16 times and made a tab switch take ~0.5 s on a loaded 2-core machine).
        self.animation_level = "none"
        self.config = config
        self._host = host
        self._open_host = open_host if host is None else None
        self.session = session
        self.session_path = session_path
        self.host_name = host_name or (host.info.name if host else session.host or "offline")
        self.unit_name = unit_name or (host.info.unit if host else (session.unit or "sglang.service"))
        self.effective_keymap: dict[str, str] = dict(config.ui.keymap)
        self._trial_loop: TrialLoop | None = None  # `trial_loop` and `link`: built on first use (_link_host)
        self._host_link: HostLink | None = None
        self.sessions = SessionSide(self)
        self.trials_to_load: int | None = None  # set before run: the session came with its newest trial only
        self.session_load: SessionLoad | None = None  # the rest of it, loaded after the first frame
        self.host_actions = HostActions(self)
        self.health: HealthSnapshot | None = None
        self.log_stats: LogStats | None = None  # what the journal said last (LogStatsChanged)
        self.fleet = FleetFeed(self, config, sessions_dir())
        self.warmup = FirstTrialWarmup(self)
        self._trials_redraw_queued = False  # a TrialsStale redraw is queued (`_trials_stale`)
        self.compared_trial_id: int | None = None  # the trial under the Trials tab's cursor: the chart's comparison
        self._quit_question: ConfirmScreen | None = None
        self.exit_hold = ExitHold()  # widgets being built: an exit waits for them (exit)
        self._saved_theme = config.ui.theme  # what the config file names (a palette pick is saved over it)
        # The real program (and the flood bench) freezes the start-up heap after the first frame (gc_policy);
        # off by default, so the test suite's hundreds of short-lived apps are collected as usual.
        self.settles_heap = False
        self.signals_stop = False  # the real program: SIGTERM/SIGHUP stop it in order (ui/signal_exit.py)
        self.heap: HeapKeeper | None = None
        self.input_order = InputInOrder(self.deliver_input, self.set_timer, self.call_later, handled=self._input_handled)
        self._started = False  # the first main screen filled and connected (once, after its first frame)
        self._main_pushed = False  # the first main screen is on the stack (_push_main_screen)
        self.sub_title = f"{self.host_name} · {self.unit_name}" if self.has_host else f"offline · {self.host_name}"
        # The theme before any stylesheet is parsed: set on mount, it made Textual parse every stylesheet again
        # after the main screen was registered (~25 ms of the first frame on 2 cores). Problems are said on mount.
        self._theme_load = register_themes(self)
        invalidated = css_updates(self)
        self._theme_problem = apply_theme(self, config.ui.theme)
        self._theme_chosen = True
        self.stylesheet.set_variables(self.get_css_variables())  # the first parse reads this theme's colours
        # Textual's theme watcher also queued a refresh (a parse of every stylesheet and a restyle of every widget
        # once the first screen is up): the variables are already right, so refresh_css skips that one.
        self._start_refresh_at = css_updates(self) if css_updates(self) != invalidated else None

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that keeps outside text from commanding the terminal (ui.safe_lines),
        chained into one: a drawn line becomes one new strip, not one per filter."""
        return self._line_filters.chain(super().get_line_filters())

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice of driver; the terminal's input is first read without the colour codes of a paste
        (`textual_compat.filter_paste_input`: a coloured paste landed reordered in a field), and bytes that are not
        UTF-8 arrive as U+FFFD instead of ending the panel (`textual_compat.lenient_terminal_input`)."""
        from specdec_tui.ui.textual_compat import filter_paste_input, lenient_terminal_input

        driver = super().get_driver_class()
        filter_paste_input()
        if driver.__module__ == "textual.drivers.linux_driver":
            lenient_terminal_input()
        return driver

    def on_mount(self) -> None:
        strips_freed_without_the_collector()  # a frame's strips die with the frame, not at a full collection
        if self.signals_stop:
            from specdec_tui.ui.signal_exit import install

            install(self)
        if self.settles_heap:  # the collector is held while the panel starts (gc_policy); back by then at the latest
            self.set_timer(START_HOLD_MAX_S, resume_collections)
        if self._theme_load.problems:
            self.notify(problems_message(self._theme_load.problems), title="Themes", severity="warning", timeout=10)
        if self._theme_problem:
            self.notify(self._theme_problem, severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_keymap(self.effective_keymap)
        self.call_later(self._push_main_screen)  # the rest of the start follows its first frame (_main_screen_filled)

    def exit(self, result: None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        """Exit once the widgets being built are in place (`ui.exit_hold`: the Config form's build or a rebuild of
        its rows, at most ~60 ms); closed in the middle of one, Textual's Select raised NoMatches — a traceback."""
        if self.exit_hold.when_released(lambda: super(SpecdecApp, self).exit(result, return_code, message)):
            return
        super().exit(result, return_code, message)

    def _push_main_screen(self) -> None:
        """The first main screen, pushed once Textual's start batch has closed (`ui.first_paint`): pushed from
        `on_mount`, inside the batch, it was laid out and painted there, a frame the batch drops, and painted again
        once it closed (~20 ms of the first frame on 2 cores). A key or a host message that comes before the loop's
        first turn pushes it first, so none finds the panel missing."""
        if not self._main_pushed:
            self._main_pushed = True
            self.push_screen(self._main_screen())

    @on(MainScreen.TabsMounted)
    def _main_screen_filled(self, message: MainScreen.TabsMounted) -> None:
        """The first main screen has every tab (after its first frame): fill them and connect to the host. A switch
        of host fills and connects its own screen (switch_host)."""
        if self._started or message.main is not self.main_or_none:
            return  # a later screen (switch_host did it), or closing meanwhile
        self._started = True
        if self.effective_keymap:  # checked after the first frame: the scopes import every screen
            for problem in keymap_problems(self.effective_keymap, self.binding_scopes().values()):
                self.notify(problem, severity="warning", timeout=10)
        self.show_trials()
        if self.settles_heap:
            self.call_after_refresh(self._settle_heap)  # every tab is built: what start-up made lives on
        from specdec_tui.ui.session_load import load_rest

        self.session_load = load_rest(self, self.trials_to_load)  # killed trials said; the rest of a long session
        self.sessions.start()
        if self.link is not None:
            self.link.connect()

    def _settle_heap(self) -> None:
        """After the first frame (ui.gc_policy): freeze what start-up built; full collections from now on run
        right after a key's answer is on screen, or when no key came for a while."""
        settle_heap()
        self.heap = HeapKeeper()
        self.set_interval(HEAP_TICK_S, self.heap.tick)

    def input_arriving(self) -> None:
        """A key typed or a click while the panel starts goes to the main screen's keys (`textual_compat.InputInOrderApp`
        holds and re-sequences input; its on_event calls this first)."""
        if self.is_running:
            self._push_main_screen()

    def _input_handled(self, event: events.Event) -> None:
        """A key has been handled all along its way (ui.input_order): a full collection that is due runs after the
        frame that shows its effect, and only if no other key came meanwhile. (Asked for when the App had merely
        handed the key on, it ran at once, before the key's widget had handled it: the key waited for it.)"""
        if self.heap is not None and isinstance(event, events.Key):
            self.heap.key_handled()
            self.call_after_refresh(self.call_later, self._answer_shown)

    def _answer_shown(self) -> None:
        if self.heap is not None:
            self.heap.answer_shown(more_input=not self.input_order.idle)

    def on_app_focus(self, _: events.AppFocus) -> None:
        """The terminal is back in front: the host's unit is read again at once (another terminal may have pushed)."""
        if self.built_link is not None:
            self.built_link.check_unit()

    def on_notify(self, message: Notify) -> None:
        """Repaint the screen once a notice has gone: a toast that expired over a widget with nothing new to draw
        (the Fleet table, a health pane that only redraws what changed) stayed painted on the terminal until
        something else repainted that spot (seen in tmux and in the browser)."""
        self.set_timer(message.notification.timeout + NOTICE_REPAINT_AFTER_S, self._repaint_after_notice)

    def _repaint_after_notice(self) -> None:
        if self.is_running:
            self.screen.refresh()

    async def on_unmount(self) -> None:
        if self.heap is not None:
            self.heap.close()
        if self._trial_loop is not None:
            self._trial_loop.end_unmeasured()
        self._flush_session()
        await self.fleet.close()
        host = self.opened_host  # one never opened has nothing to close
        if host is not None:
            try:
                await host.close()
            except HostError:
                pass  # leaving anyway; nothing the user can do about a close that failed

    # -- rendering what the loop says ----------------------------------------------------------
    async def _filled_main(self) -> MainScreen | None:
        """The main screen with every tab mounted (waiting for them when a message comes right at start, before
        they are: nothing is dropped); None while the app shuts down."""
        if self.is_running:
            self._push_main_screen()  # a message before the loop's first turn
        main = self.main_or_none
        while main is not None and not main.tabs_mounted:
            await main.mount_tabs()
            main = self.main_or_none  # a switch of host meanwhile: the new screen's tabs too
        return main

    def show_loop_event(self, event: LoopEvent) -> None:
        """A loop event, as its own message (`ui.loop_messages`), to the main screen that shows it (`LoopScreen`);
        pushed first when an event comes before the loop's first turn. Dropped while the app shuts down."""
        if self.is_running:
            self._push_main_screen()
        main = self.main_or_none
        if main is not None:
            from specdec_tui.ui.loop_messages import loop_message

            main.post_message(loop_message(event))

    @on(MainScreen.TrialsStale)
    def _trials_stale(self, _: MainScreen.TrialsStale) -> None:
        """Redrawn once for the stale messages already queued (a sweep's level, trial end and next push come in
        bursts): after the messages before it, so a key typed meanwhile is not held behind one redraw each."""
        if not self._trials_redraw_queued:
            self._trials_redraw_queued = True
            self.call_later(self._redraw_trials)

    def _redraw_trials(self) -> None:
        self._trials_redraw_queued = False
        self.show_trials()

    @on(MainScreen.ChartStale)
    def _chart_stale(self, _: MainScreen.ChartStale) -> None:
        self.show_bench_chart()

    @on(MainScreen.BenchWanted)
    def _bench_wanted(self, _: MainScreen.BenchWanted) -> None:
        self.action_bench()

    @on(m.ServiceInactive)
    def _service_inactive(self, _: m.ServiceInactive) -> None:
        if self.busy is not Busy.IDLE or self.main_or_none is None or self.link is None:
            return  # the user already started something (or the app is closing)
        self.marker("demo service was not running: starting it")
        self.notify("The demo server was not running; starting it. Health shows starting → loading → ready.")
        self.link.start_service()

    @on(m.HealthChanged)
    async def _health_changed(self, message: m.HealthChanged) -> None:
        self.health = message.snapshot
        if message.snapshot.state.value == "ready":
            self.warmup.start(self.session, self.session_path)  # the first trial's imports and save, off the loop
        main = await self._filled_main()
        if main is not None:
            for view in main.health_views:
                view.update_health(message.snapshot)

    @on(m.JournalBatch)
    async def _journal(self, message: m.JournalBatch) -> None:
        main = await self._filled_main()
        if main is not None:
            with suppress(NoMatches):  # it arrived while the app shuts down
                main.journal_pane.add_records(message.records, message.kinds, lines=message.lines)

    @on(m.LogStatsChanged)
    async def _log_stats_changed(self, message: m.LogStatsChanged) -> None:
        self.log_stats = message.stats
        main = await self._filled_main()
        if main is not None:
            for view in main.health_views:
                view.update_log_stats(message.stats)

    @on(m.DoctorFindingRaised)
    async def _doctor_finding_raised(self, message: m.DoctorFindingRaised) -> None:
        main = await self._filled_main()
        if main is not None:
            finding = message.finding
            if finding.kind not in main.doctor_section.findings:  # new: marked in the journal where it began
                self.marker(f"doctor: {finding.kind.value} — {finding.cost} (Health tab)")
            main.doctor_section.raise_finding(finding)
            main.show_doctor_badge()

    @on(m.DoctorFindingCleared)
    async def _doctor_finding_cleared(self, message: m.DoctorFindingCleared) -> None:
        main = await self._filled_main()
        if main is not None:
            if message.kind in main.doctor_section.findings:
                self.marker(f"doctor: {message.kind.value} cleared (its evidence stopped)")
            main.doctor_section.clear_finding(message.kind)
            main.show_doctor_badge()

    @on(m.RecoveryOffered)
    def _recovery_offered(self, message: m.RecoveryOffered) -> None:
        from specdec_tui.ui.recovery_offer import ask

        ask(self, message)

    @on(m.RecoveryEnded)
    def _recovery_ended(self, message: m.RecoveryEnded) -> None:
        from specdec_tui.ui.recovery_offer import report

        report(self, message)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.fleet.show(event.pane.id == "fleet")

    @on(m.FleetRows)
    async def _fleet_rows(self, message: m.FleetRows) -> None:
        main = await self._filled_main()  # the Fleet tab opened right at start: its table may still be coming
        if main is not None:
            main.fleet_table.set_rows(message.rows, active=self.host_name if self.has_host else "",
                                      refused=message.refused)

    async def on_fleet_table_chosen(self, message: FleetTable.Chosen) -> None:
        await self.switch_host(message.name)

    def on_trials_list_highlighted(self, message: TrialsList.Highlighted) -> None:
        self.compared_trial_id = message.trial_id
        if self.main_or_none is not None:
            self.main.trade_off_chart.select(message.trial_id)
            self.show_bench_chart()

    async def on_trials_list_selected(self, message: TrialsList.Selected) -> None:
        await self.sessions.show_trial(message.trial_id, True)


def make_app(config: Config, host: Host | None, session: Session, *, session_path: Path | None,
             host_name: str | None = None, unit_name: str | None = None,
             open_host: Callable[[], Host] | None = None) -> SpecdecApp:
    """Build the panel. `host` None opens the session offline (browse trials, no push), unless `open_host` opens
    the host named `host_name` that runs `unit_name` after the first frame (the demo's; SpecdecApp.__init__)."""
    return SpecdecApp(config, host, session, session_path=session_path, host_name=host_name, unit_name=unit_name,
                      open_host=open_host)
