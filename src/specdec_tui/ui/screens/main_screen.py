"""The main screen: tabs for Config, Journal, Health, Benchmark, Trials and Fleet, plus the footer.

Display widgets come from `ui/widgets/` (one a file) and are reached through the typed properties here;
the screen only lays out and routes: state lives in the trial loop, rendered by the app's `@on` handlers.

Only the Config tab's content is composed with the screen; the other tabs' content (and the modules behind it:
charts, journal, health, tables) is mounted by `mount_tabs` after the screen's first refresh, and `TabsMounted`
then tells the app to fill the tabs and connect, so the host connection, the demo server's start and the feeds
no longer compete with the start (issue 16). Keys work meanwhile (a tab key shows its tab at once); what reads a
later tab's widgets before then awaits `mount_tabs` (it mounts once; later callers wait for that). At start-up
Textual runs after-refresh callbacks without painting while the app's start batch is open, so the frame written
to the terminal still comes after `mount_tabs`; mounting behind that held-back paint is an open point of issue 16.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, TabbedContent, TabPane, Tabs

from specdec_tui.ui.keymap import MAIN_SCREEN_BINDINGS
from specdec_tui.ui.widgets.config_pane import ConfigPane
from specdec_tui.ui.widgets.flag_form import FlagForm
from specdec_tui.ui.widgets.stable_footer import StableFooter

if TYPE_CHECKING:  # mounted after the first frame (mount_tabs), imported there; the properties below cast
    from specdec_tui.ui.widgets.bench_table import BenchTable
    from specdec_tui.ui.widgets.fleet_table import FleetTable
    from specdec_tui.ui.widgets.health_pane import HealthPane
    from specdec_tui.ui.widgets.journal_pane import JournalPane
    from specdec_tui.ui.widgets.tok_chart import TokChart
    from specdec_tui.ui.widgets.trade_off_chart import TradeOffChart
    from specdec_tui.ui.widgets.trials_list import TrialsList

TABS: tuple[tuple[str, str], ...] = (
    ("config", "1 Config"),
    ("journal", "2 Journal"),
    ("health", "3 Health"),
    ("bench", "4 Bench"),
    ("trials", "5 Trials"),
    ("fleet", "6 Fleet"),
)
WIDE_MIN_COLUMNS = 140  # from here on health and bench sit side by side in the Bench tab
HEALTH_VIEW = "health-view"  # class of every health pane (the Health tab's and the Bench tab's side copy)


def is_wide(width: int) -> bool:
    """Wide enough to show health beside the benchmark (the whole push → ready → bench loop at once)."""
    return width >= WIDE_MIN_COLUMNS


class MainScreen(Screen[None]):
    """Wide terminals show health beside the journal too: a start (loading → ready, or the error
    that failed it) reads in one glance with the lines that explain it."""

    BINDINGS = MAIN_SCREEN_BINDINGS
    DEFAULT_CSS = """
    MainScreen #journal-row { height: 1fr; }
    MainScreen #journal-pane { width: 1fr; }
    MainScreen #journal-health { display: none; width: 58; border-left: vkey $panel; }
    MainScreen.-wide #journal-health { display: block; }
    """

    class TabsMounted(Message):
        """Every tab's content is mounted (after the first frame): the app fills the tabs and connects."""

        def __init__(self, screen: MainScreen) -> None:
            super().__init__()
            self.main = screen

    def __init__(self, *, running_text: str, draft_key: tuple[str, str] | None, journal_lines: int) -> None:
        super().__init__()
        self.running_text = running_text
        self.draft_key = draft_key
        self.journal_lines = journal_lines
        self._mounting: asyncio.Event | None = None  # set once mount_tabs has put every tab's content in place
        self._composed = asyncio.Event()  # set on mount: the Config tab and everything in it is there

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with TabbedContent(initial="config", id="tabs"):
            with TabPane(TABS[0][1], id="config"):
                yield ConfigPane(self.running_text, draft_key=self.draft_key, id="config-pane")
            for tab_id, title in TABS[1:]:
                yield TabPane(title, id=tab_id)  # filled by mount_tabs, after the first frame
        yield StableFooter(compact=True)  # with the loop's keys only, fits 80 columns (the rest: ? and ctrl+p)

    @property
    def tabs_mounted(self) -> bool:
        return self._mounting is not None and self._mounting.is_set()

    async def mount_tabs(self) -> None:
        """Mount the content of every tab but Config (hidden on the first frame). Runs once; a second caller
        returns when the first one's mount is done, so it can then read any tab's widgets."""
        if self._mounting is not None:
            await self._mounting.wait()
            return
        self._mounting = asyncio.Event()
        await self._composed.wait()  # a message right after a switch of host: the Config tab comes first
        from specdec_tui.ui.widgets.bench_table import BenchTable
        from specdec_tui.ui.widgets.fleet_table import FleetTable
        from specdec_tui.ui.widgets.health_pane import HealthPane
        from specdec_tui.ui.widgets.journal_pane import JournalPane
        from specdec_tui.ui.widgets.tok_chart import TokChart
        from specdec_tui.ui.widgets.trade_off_chart import TradeOffChart
        from specdec_tui.ui.widgets.trials_list import TrialsList

        content: dict[str, list[Widget]] = {
            "journal": [Horizontal(JournalPane(id="journal-pane", max_lines=self.journal_lines),
                                   HealthPane(id="journal-health", classes=HEALTH_VIEW), id="journal-row")],
            "health": [HealthPane(id="health-pane", classes=HEALTH_VIEW)],
            "bench": [Horizontal(Vertical(BenchTable(id="bench-table"), TokChart(id="tok-chart"), id="bench-main"),
                                 HealthPane(id="health-side", classes=HEALTH_VIEW), id="bench-row")],
            "trials": [TrialsList(id="trials-list"), TradeOffChart(id="trade-off-chart")],
            "fleet": [FleetTable(id="fleet-table")],
        }
        mounts = [self.query_one(f"#{tab_id}", TabPane).mount_all(widgets) for tab_id, widgets in content.items()]
        for mounted in mounts:
            await mounted
        self._mounting.set()

    def on_mount(self) -> None:
        self._composed.set()
        self.set_class(is_wide(self.app.size.width), "-wide")
        self.call_after_refresh(self.focus_active_tab)
        self.call_after_refresh(self._after_first_frame)

    async def _after_first_frame(self) -> None:
        await self.mount_tabs()
        self.focus_active_tab()  # a tab key pressed before its content was there: the focus goes in now
        self.post_message(self.TabsMounted(self))

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(is_wide(event.size.width), "-wide")

    @property
    def config_pane(self) -> ConfigPane:
        return self.query_one(ConfigPane)

    @property
    def journal_pane(self) -> JournalPane:
        return cast("JournalPane", self.query_one("#journal-pane"))

    @property
    def bench_table(self) -> BenchTable:
        return cast("BenchTable", self.query_one("#bench-table"))

    @property
    def tok_chart(self) -> TokChart:
        return cast("TokChart", self.query_one("#tok-chart"))

    @property
    def trade_off_chart(self) -> TradeOffChart:
        return cast("TradeOffChart", self.query_one("#trade-off-chart"))

    @property
    def trials_list(self) -> TrialsList:
        return cast("TrialsList", self.query_one("#trials-list"))

    @property
    def fleet_table(self) -> FleetTable:
        return cast("FleetTable", self.query_one("#fleet-table"))

    @property
    def health_views(self) -> list[HealthPane]:
        """The Health tab's pane and its copies beside the journal and the benchmark ([] before mount_tabs)."""
        return cast("list[HealthPane]", list(self.query(f".{HEALTH_VIEW}")))

    def action_show_tab(self, tab: str) -> None:
        """A tab key: show the tab and put the focus in it (also when the tab bar had it)."""
        self.query_one(TabbedContent).active = tab
        self.call_after_refresh(self.focus_active_tab)

    def focus_active_tab(self) -> None:
        """Focus the first focusable widget of the shown tab (the first flag field, the journal log,
        the bench table, the trials table), so keys reach what the user is looking at."""
        tabs = self.query_one(TabbedContent)
        pane = tabs.get_pane(tabs.active) if tabs.active else None
        if pane is None:
            return
        focused = self.focused
        if focused is not None and pane in focused.ancestors:
            return  # already in the tab (the user, or a test, put it there meanwhile)
        if tabs.active == "config":
            self.config_pane.query_one(FlagForm).focus_first_field()
            return
        target = next((w for w in self.focus_chain if pane in w.ancestors), None)
        if target is not None:  # now, not queued: a focus the user asks for meanwhile comes after and wins
            self.set_focus(target, scroll_visible=False)

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_shown(self, _: TabbedContent.TabActivated) -> None:
        """After a switch the old focus is hidden; move it into the tab. Arrowing along the tab bar
        keeps the focus on the bar."""
        if isinstance(self.focused, Tabs):
            return
        self.call_after_refresh(self.focus_active_tab)

    async def action_filter_journal(self) -> None:
        self.action_show_tab("journal")
        await self.mount_tabs()
        journal = self.journal_pane
        if hasattr(journal, "open_filter"):
            journal.open_filter()

    async def action_in_journal(self, action: str) -> None:
        """A journal key run from the palette: show the journal and run it there ("follow", ...)."""
        self.action_show_tab("journal")
        await self.mount_tabs()
        await self.journal_pane.run_action(action)

    async def action_apply_fix(self) -> None:
        done = await self.config_pane.apply_fix()
        self.notify(done or "No issue with a suggested fix.", severity="information" if done else "warning")
