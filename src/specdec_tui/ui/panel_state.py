"""What the panel knows and how its views are reached: the host (opened on first use), the trial loop and host link
(built on first use), the session, the main screen and its panes, the start's CSS, and the trials and charts drawn
from the session. `SpecdecApp` (ui/app.py) adds the handlers, actions and start sequence on top; split so that
neither file holds everything (issue 34)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding, BindingType

from specdec_tui.core.config import Config
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session
from specdec_tui.core.words import in_words
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.states import Busy
from specdec_tui.ui.input_order import InputInOrder
from specdec_tui.ui.keymap import MODAL_BINDINGS, KeyRow, key_rows
from specdec_tui.ui.screens.main_screen import MainScreen
from specdec_tui.ui.session_side import session_scopes
from specdec_tui.ui.textual_compat import css_updates

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.theme import Theme

    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.core.trade_off import TradeOffPoint
    from specdec_tui.hosts.base import Host
    from specdec_tui.loop.events import LoopEvent
    from specdec_tui.loop.health import HealthSnapshot
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.ui.host_link import HostLink
    from specdec_tui.ui.widgets.config_pane import ConfigPane


class PanelState(App[None]):
    """The state `SpecdecApp.__init__` sets (declared here) and the accessors every part of the panel reads."""

    config: Config
    session: Session
    session_path: Path | None
    host_name: str
    unit_name: str
    compared_trial_id: int | None
    effective_keymap: dict[str, str]
    health: HealthSnapshot | None
    log_stats: LogStats | None
    input_order: InputInOrder
    _host: Host | None
    _open_host: Callable[[], Host] | None
    _trial_loop: TrialLoop | None
    _host_link: HostLink | None
    _start_refresh_at: int | None
    _saved_theme: str

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Every notification of the panel (a widget's or screen's `notify` comes here too), as plain text: its
        words come from outside often enough (labels and flag values of a session, host names, a server's or a
        host's error words, paths) that a "[/]" ended the panel (MarkupError) and a "[b]" restyled it. `markup`
        is taken for the signature only: `Widget.notify` passes True by default."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def show_loop_event(self, event: LoopEvent) -> None:
        raise NotImplementedError  # SpecdecApp's: the link hands it every loop event

    @property
    def host(self) -> Host | None:
        """The host the panel acts on; None offline. One given as `open_host` (the demo's) is opened here, on first
        use: its module and records (~45 M instructions of dataclasses) load after the first frame, not before."""
        if self._host is None and self._open_host is not None:
            opener, self._open_host = self._open_host, None
            self._host = opener()
        return self._host

    @host.setter
    def host(self, host: Host | None) -> None:
        self._host, self._open_host = host, None

    @property
    def opened_host(self) -> Host | None:
        """The host if it has been opened (what there is to close); never opens one."""
        return self._host

    @property
    def has_host(self) -> bool:
        """Whether the panel runs on a host (not offline), asked without opening one."""
        return self._host is not None or self._open_host is not None

    # -- the start's CSS: parsed once, with the panel's theme ------------------------------------------
    _theme_chosen = False  # a class default: Textual's App.__init__ asks for variables before the theme is picked

    def get_css_variables(self) -> dict[str, str]:
        """The theme's CSS variables; none while Textual's `__init__` builds its stylesheet, before the panel has
        picked its theme: those of Textual's default theme were computed only to be replaced (~1.5 ms)."""
        return super().get_css_variables() if self._theme_chosen else {}

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's, except the refresh the start's theme queued, when nothing has changed the CSS since
        (`textual_compat.css_updates`, which every theme or colour change raises): it re-parsed every stylesheet and restyled
        the whole first screen for variables that were already in place."""
        queued_at, self._start_refresh_at = self._start_refresh_at, None
        if queued_at is not None and queued_at == css_updates(self):
            return
        super().refresh_css(animate)

    # -- state the views read ------------------------------------------------------------------
    @property
    def busy(self) -> Busy:
        """The loop's busy state as last shown by the main screen (its events arrive in order, so a benchmark
        shown ended has its trial recorded and said); refusals ask the loop itself."""
        main = self.main_or_none
        return main.busy if main is not None else Busy.IDLE

    @property
    def bench_running(self) -> bool:
        return self.busy is Busy.BENCH

    @property
    def main_or_none(self) -> MainScreen | None:
        """The main screen, or None before it is pushed / while the app shuts down (`is_running` turns False
        before the screens are emptied, so a late worker message never looks for a widget already removed)."""
        if not self.is_running:
            return None
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    @property
    def main(self) -> MainScreen:
        main = self.main_or_none
        if main is None:
            raise LookupError("the main screen is not up")
        return main

    @property
    def config_pane(self) -> ConfigPane:
        """The Config pane, once the form is mounted (a key or a message right at start: `edit_pane`)."""
        return self.main.config_pane

    async def edit_pane(self) -> ConfigPane | None:
        """The Config pane, waiting for it when a key comes before the form is mounted (right after the first
        frame: nothing is lost, the key acts on the form once it is there); None while the app shuts down."""
        main = self.main_or_none
        while main is not None and not main.form_mounted:
            await main.mount_form()
            main = self.main_or_none  # a switch of host meanwhile: the new screen's form too
        return main.config_pane if main is not None else None

    @property
    def has_unpushed_edit(self) -> bool:
        """An edit that differs from the host's unit. Before the form is mounted there is none (every edit,
        a restored draft too, goes through the form), so this needs no wait."""
        main = self.main_or_none
        return main is not None and main.form_mounted and main.config_pane.dirty

    # -- start ---------------------------------------------------------------------------------
    @property
    def trial_loop(self) -> TrialLoop | None:
        """The trial loop on `self.host`; None offline. Built on first use: on a normal start that is right after
        the first frame (the loop, the link and their ~40 records are not needed to draw it: ~50 ms on 2 cores),
        at once when a key needs it sooner."""
        if self._trial_loop is None and self.host is not None:
            self._link_host()
        return self._trial_loop

    @property
    def built_link(self) -> HostLink | None:
        """The link if it was built (`link` builds one): what a stop has to cancel."""
        return self._host_link

    @property
    def link(self) -> HostLink | None:
        """The host link that runs `loop`'s steps for the panel; None offline. Built with `loop`."""
        if self._host_link is None and self.host is not None:
            self._link_host()
        return self._host_link

    def _link_host(self) -> None:
        """The trial loop and the host link for `self.host`, from the config, session and host as they are now."""
        assert self.host is not None
        from specdec_tui.loop.trial import TrialLoop
        from specdec_tui.ui.host_link import HostLink

        self._trial_loop = TrialLoop.for_host(self.host, self.config, self.session, host_name=self.host_name,
                                              session_path=self.session_path, profile=self.config.profile())
        self._trial_loop.save_in_background = True  # the session file is written off the event loop, coalesced
        self._host_link = HostLink(self, self.host, self._trial_loop, journal_lines=self.config.ui.journal_lines,
                                   pause=self.input_order.quiet, show=self.show_loop_event)

    def _main_screen(self) -> MainScreen:
        running = "" if self.has_host else (self.session.trials[-1].unit_text if self.session.trials else "")
        from specdec_tui.loop.edit_draft import EditDraft

        draft = EditDraft(self.host_name, self.unit_name) if self.has_host else None
        return MainScreen(running_text=running, draft=draft, journal_lines=self.config.ui.journal_lines,
                          auto_bench=self.config.ui.auto_bench)

    def marker(self, text: str) -> None:
        main = self.main_or_none
        if main is not None and main.tabs_mounted:  # a key right at start, before the journal is there: no line
            main.journal_pane.add_marker(text)

    def open_offline_session(self, session: Session, path: Path) -> None:
        """Browse `session` offline in place of the one shown (the sessions list's choice, with no host)."""
        self.session, self.session_path = session, path
        self.host_name = session.host or "offline"
        self.unit_name = session.unit or self.unit_name
        self.sub_title = f"offline · {self.host_name} · {path.name}"
        self.show_trials()

    def show_trials(self) -> None:
        main = self.main_or_none
        if main is None:
            return  # a late message while the app shuts down
        main.trials_list.set_trials(list(self.session.trials))
        self.show_bench_chart()
        main.trade_off_chart.set_source(self._trade_off)  # made when the Trials tab shows it (and the newest only)
        main.trade_off_chart.select(main.trials_list.current_trial_id)

    def _trade_off(self) -> tuple[list[TradeOffPoint], set[int]]:
        from specdec_tui.core.trade_off import pareto_front, trade_off_points

        points = trade_off_points(self.session)
        return points, pareto_front(points)

    def show_bench_chart(self) -> None:
        """The Bench tab's curves as the session and the benchmark are now."""
        main = self.main_or_none
        if main is not None:
            main.tok_chart.set_trials(self._chart_trials())

    def _chart_trials(self) -> list[tuple[str, list[LevelResult]]]:
        from specdec_tui.core.compare import chart_series

        return chart_series(list(self.session.trials), self.trial_loop.trial if self.trial_loop is not None else None,
                            self.compared_trial_id, measuring=self.bench_running)

    def _flush_session(self) -> None:
        """The session's last state on disk before the panel goes (or leaves it for another host's)."""
        if self.session_path is None or self._trial_loop is None:
            return  # no trial loop, no background save
        from specdec_tui.loop.session_saver import saver_for

        try:
            saver_for(self.session_path).flush(timeout_s=30)
        except Exception as err:  # noqa: BLE001 - leaving anyway: said, not raised
            self.notify(f"The session was not saved: {in_words(err)}", severity="error")

    def binding_scopes(self) -> dict[str, Iterable[BindingType]]:
        """Every BINDINGS the help screen lists, by where they apply."""
        from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
        from specdec_tui.ui.screens.error_screen import ErrorScreen
        from specdec_tui.ui.screens.help_screen import HelpScreen
        from specdec_tui.ui.screens.unit_changed_screen import UnitChangedScreen

        return {"App": type(self).BINDINGS, "Main": MainScreen.BINDINGS, "Dialogs": MODAL_BINDINGS,
                "Help": HelpScreen.BINDINGS,
                "Confirm": ConfirmScreen.BINDINGS, "Error": ErrorScreen.BINDINGS, "Load form": BenchFormScreen.BINDINGS,
                "Host's unit": UnitChangedScreen.BINDINGS, **session_scopes()}

    def help_rows(self) -> list[KeyRow]:
        return key_rows(self.binding_scopes(), self.effective_keymap, self.key_display)

    def key_display(self, key: str) -> str:
        """A key as the footer shows it ("?", "^s", "esc"), so the help and the palette say the same."""
        return self.get_key_display(Binding(key, ""))

    async def switch_host(self, name: str) -> None:
        """Make `name` the active host without restarting the panel: its unit, journal, health and a session of
        its own. Refused while the loop is busy; an edit in progress stays a draft of the host it was made on."""
        if self.has_host and name == self.host_name:
            self.notify(f"{name} is already the active host.")
            return
        if self.trial_loop is not None and self.busy is not Busy.IDLE:
            self.notify(f"Not switching to {name}: {self.busy.value} is running on {self.host_name}. Let it finish "
                        "or cancel it first.", severity="warning")
            return
        from specdec_tui.hosts.factory import open_host
        from specdec_tui.loop.current_session import continue_or_start

        try:
            new_host = open_host(self.config, name)
        except HostError as err:
            self.notify(f"Cannot switch to {name}: {in_words(err)}", severity="error")
            return
        pane = await self.edit_pane()
        if pane is not None:
            pane.flush_draft()
        for group in ("connect", "journal", "health", "gauges", "reload-unit", "unit-watch", "unit-check"):
            self.workers.cancel_group(self, group)
        self._flush_session()  # the old host's session, complete on disk before its panel goes
        old, self.host = self.host, new_host
        if old is not None:
            try:
                await old.close()
            except HostError:
                pass
        self.host_name, self.unit_name = name, new_host.info.unit
        self.session, self.session_path = continue_or_start(name, self.unit_name, sessions_dir(),
                                                            profile=self.config.profile())
        # the new host's loop and link: built on first use (show_trials, below)
        self._trial_loop, self._host_link, self.health, self.log_stats = None, None, None, None
        self.compared_trial_id = None
        self.sub_title = f"{self.host_name} · {self.unit_name}"
        await self.switch_screen(self._main_screen())  # the Fleet tab's enter: the main screen is on top
        await self.main.mount_tabs()  # every tab at once here, as before: the panel is already up
        self.show_trials()
        if self.link is not None:
            self.link.connect()
        kept = len(self.session.trials)
        where = (f"continuing its session ({kept} trial{'s' if kept != 1 else ''})" if kept
                 else f"trials now go to a new session of {name}")
        self.notify(f"Active host: {name} ({self.unit_name}); {where}.")

    def action_save_session(self) -> None:
        if self.session_path is None:
            self.notify("No session file: start with --session FILE to keep trials.", severity="warning")
            return
        from specdec_tui.loop.session_saver import saver_for

        try:  # through the file's one writer: never beside a trial's save in flight
            saver = saver_for(self.session_path)
            saver.save(self.session)
            saver.flush()
        except Exception as err:  # noqa: BLE001
            self.notify(f"Could not save the session: {in_words(err)}", severity="error")
            return
        self.notify(f"Session saved to {self.session_path}.")

    def _theme_changed(self, theme: Theme) -> None:
        """Save a theme picked in the palette to the config file. Not the one the file already names (the start
        applies it too): rewriting the file then cost every start ~20 ms of TOML writing before its first frame."""
        if not self.config.source or theme.name == self._saved_theme:
            return
        from specdec_tui.core.config_file import save_ui_theme

        try:
            save_ui_theme(Path(self.config.source), theme.name)
        except Exception as err:  # noqa: BLE001
            self.notify(f"Theme not saved to {self.config.source}: {in_words(err)}", severity="warning")
            return
        self._saved_theme = theme.name
