"""The main screen: tabs for Config, Journal, Health, Benchmark, Trials and Fleet, plus the footer.

Display widgets come from `ui/widgets/` (one a file) and are reached through the typed properties here;
the screen only lays out and routes: state lives in the trial loop, rendered by the app's `@on` handlers.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Header, TabbedContent, TabPane, Tabs

from specdec_tui.ui.keymap import MAIN_SCREEN_BINDINGS
from specdec_tui.ui.widgets.bench_table import BenchTable
from specdec_tui.ui.widgets.config_pane import ConfigPane
from specdec_tui.ui.widgets.flag_form import FlagForm
from specdec_tui.ui.widgets.fleet_table import FleetTable
from specdec_tui.ui.widgets.health_pane import HealthPane
from specdec_tui.ui.widgets.journal_pane import JournalPane
from specdec_tui.ui.widgets.stable_footer import StableFooter
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

    def __init__(self, *, running_text: str, draft_key: tuple[str, str] | None, journal_lines: int) -> None:
        super().__init__()
        self.running_text = running_text
        self.draft_key = draft_key
        self.journal_lines = journal_lines

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with TabbedContent(initial="config", id="tabs"):
            with TabPane(TABS[0][1], id="config"):
                yield ConfigPane(self.running_text, draft_key=self.draft_key, id="config-pane")
            with TabPane(TABS[1][1], id="journal"):
                with Horizontal(id="journal-row"):
                    yield JournalPane(id="journal-pane", max_lines=self.journal_lines)
                    yield HealthPane(id="journal-health", classes=HEALTH_VIEW)
            with TabPane(TABS[2][1], id="health"):
                yield HealthPane(id="health-pane", classes=HEALTH_VIEW)
            with TabPane(TABS[3][1], id="bench"):
                with Horizontal(id="bench-row"):
                    with Vertical(id="bench-main"):
                        yield BenchTable(id="bench-table")
                        yield TokChart(id="tok-chart")
                    yield HealthPane(id="health-side", classes=HEALTH_VIEW)
            with TabPane(TABS[4][1], id="trials"):
                yield TrialsList(id="trials-list")
                yield TradeOffChart(id="trade-off-chart")
            with TabPane(TABS[5][1], id="fleet"):
                yield FleetTable(id="fleet-table")
        yield StableFooter(compact=True)  # with the loop's keys only, fits 80 columns (the rest: ? and ctrl+p)

    def on_mount(self) -> None:
        self.set_class(is_wide(self.app.size.width), "-wide")
        self.call_after_refresh(self.focus_active_tab)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(is_wide(event.size.width), "-wide")

    @property
    def config_pane(self) -> ConfigPane:
        return self.query_one(ConfigPane)

    @property
    def journal_pane(self) -> JournalPane:
        return self.query_one("#journal-pane", JournalPane)

    @property
    def bench_table(self) -> BenchTable:
        return self.query_one("#bench-table", BenchTable)

    @property
    def tok_chart(self) -> TokChart:
        return self.query_one("#tok-chart", TokChart)

    @property
    def trade_off_chart(self) -> TradeOffChart:
        return self.query_one("#trade-off-chart", TradeOffChart)

    @property
    def trials_list(self) -> TrialsList:
        return self.query_one("#trials-list", TrialsList)

    @property
    def fleet_table(self) -> FleetTable:
        return self.query_one("#fleet-table", FleetTable)

    @property
    def health_views(self) -> list[HealthPane]:
        """The Health tab's pane and its copies beside the journal and the benchmark."""
        return list(self.query(HealthPane))

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

    def action_filter_journal(self) -> None:
        self.action_show_tab("journal")
        journal = self.journal_pane
        if hasattr(journal, "open_filter"):
            journal.open_filter()

    async def action_in_journal(self, action: str) -> None:
        """A journal key run from the palette: show the journal and run it there ("follow", ...)."""
        self.action_show_tab("journal")
        await self.journal_pane.run_action(action)

    async def action_apply_fix(self) -> None:
        done = await self.config_pane.apply_fix()
        self.notify(done or "No issue with a suggested fix.", severity="information" if done else "warning")
