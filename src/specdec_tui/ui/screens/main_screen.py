"""The main screen: tabs for Config, Journal, Health, Benchmark, Trials and Fleet, plus the footer.

Display widgets come from `ui/widgets/` (one a file) and are reached through the typed properties here;
the screen only lays out and routes: state lives in the trial loop, whose events its base `LoopScreen` shows
(one `@on` handler per message of `ui.loop_messages`).

The start sequence (issue 16, cold start ≤ 1.3× a minimal Textual app):

1. compose: the header, the tab bar, the Config tab showing the running unit as read-only text (`UnitPreview`,
   one widget) and the footer. Textual mounts the first screen inside its start batch, which holds every
   frame back, so the form waits (`ui.first_paint.after_painted`) for a frame written with no batch open:
   that frame is on the terminal before anything heavy is built.
2. `mount_form`, started right there in the screen's own message loop (a key typed meanwhile is answered once the
   form is there; an exit waits for it, `ui.exit_hold`): the Config pane (flag form, unit editor, diff) replaces
   the preview, and the first flag field gets the focus unless the user moved meanwhile (another tab, another widget).
3. after the form's frame, `mount_tabs`: the other tabs' content (charts, journal, health, tables, and
   their modules), then `TabsMounted` tells the app to fill the tabs and connect, so the host connection,
   the demo server's start and the feeds do not compete with the start.

Keys work throughout (a tab key shows its tab at once). Whatever reads the Config pane awaits `mount_form`
(`app.edit_pane()`), whatever reads a later tab awaits `mount_tabs` (`app._filled_main()`, `LoopScreen._shown`,
which include the form): each mounts once, later callers wait for that, and a caller that comes first just mounts earlier.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Header, TabbedContent, TabPane, Tabs

from specdec_tui.ui.exit_hold import exit_held
from specdec_tui.ui.first_paint import after_painted
from specdec_tui.ui.keymap import MAIN_SCREEN_BINDINGS
from specdec_tui.ui.screens.loop_screen import LoopScreen
from specdec_tui.ui.textual_compat import focus_without_repaint
from specdec_tui.ui.widgets.alike_rows import AlikeRows, PlainTabPane, draw_alike_rows_once
from specdec_tui.ui.widgets.stable_footer import StableFooter
from specdec_tui.ui.widgets.strip_scroll_bar import draw_scroll_bars_as_strips
from specdec_tui.ui.widgets.unit_preview import UnitPreview

if TYPE_CHECKING:  # mounted after the first frame (mount_form, mount_tabs), imported there; the properties cast
    from specdec_tui.loop.edit_draft import EditDraft
    from specdec_tui.ui.widgets.bench_table import BenchTable
    from specdec_tui.ui.widgets.config_pane import ConfigPane
    from specdec_tui.ui.widgets.doctor_section import DoctorSection
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


class MainTabs(TabbedContent, AlikeRows):
    """TabbedContent, but a focus that has already left a pane does not show that pane again.

    TabbedContent shows the pane of a widget focused in code, two messages later (`TabPane.Focused`). A focus
    made in code (the first flag field when the form arrives, a field re-focused after a rebuild) followed at
    once by a tab key then switched the tab back: the key's tab was shown, then the stale message showed the
    old one. The tab key moves the focus out of the old pane (`MainScreen.action_show_tab`), so by the time the
    message comes the focus is no longer in its pane, and it is dropped."""

    def on_mount(self) -> None:
        draw_alike_rows_once(self.query_one(ContentSwitcher))  # under every tab pane: one row, repeated

    def on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.screen.focused
        if focused is None or event.tab_pane not in focused.ancestors:
            event.prevent_default()  # TabbedContent's own handler would make that pane the active one
            event.stop()


def is_wide(width: int) -> bool:
    """Wide enough to show health beside the benchmark (the whole push → ready → bench loop at once)."""
    return width >= WIDE_MIN_COLUMNS


class MainScreen(LoopScreen, AlikeRows):
    """Wide terminals show health beside the journal too: a start (loading → ready, or the error
    that failed it) reads in one glance with the lines that explain it."""

    BINDINGS = MAIN_SCREEN_BINDINGS
    # Textual's Screen.focused repaints the whole screen on every change (a Reactive's default): a tab switch
    # moves the focus twice, so it painted every row twice more than its layout did (2 full renders of 160x48,
    # 30-45 ms each here). A focus change needs no such repaint: the widgets whose focus styles change are
    # restyled and refreshed on their own (Screen._update_focus_styles), and the footer follows the bindings signal.
    focused: Reactive[Widget | None] = focus_without_repaint()
    DEFAULT_CSS = """
    MainScreen #journal { layout: horizontal; height: 1fr; }
    MainScreen #journal-pane { width: 1fr; }
    MainScreen #journal-health { display: none; width: 58; border-left: vkey $panel; }
    MainScreen.-wide #journal-health { display: block; }
    """

    class TabsMounted(Message):
        """Every tab's content is mounted (after the first frame): the app fills the tabs and connects."""

        def __init__(self, screen: MainScreen) -> None:
            super().__init__()
            self.main = screen

    def __init__(self, *, running_text: str, draft: EditDraft | None, journal_lines: int,
                 auto_bench: bool = False) -> None:
        super().__init__(draft=draft, auto_bench=auto_bench)
        self.running_text = running_text
        self.journal_lines = journal_lines
        self._form: asyncio.Event | None = None  # set once mount_form has put the Config pane in place
        self._mounting: asyncio.Event | None = None  # set once mount_tabs has put every tab's content in place
        self._health_views: list[HealthPane] = []  # mount_tabs's, kept: a query walked the whole screen (issue 34)
        self._composed = asyncio.Event()  # set on mount: the tab bar and the unit preview are there
        self._start_focus: Widget | None = None  # the focus Textual gave on compose (the user has not moved yet)
        self._resumed = False  # the first ScreenResume has come (see on_screen_resume)

    def compose(self) -> ComposeResult:
        # before the children exist: set on mount, the class restyled every widget of the screen once more
        self.set_class(is_wide(self.app.size.width), "-wide")
        yield Header(icon="≡")
        with MainTabs(initial="config", id="tabs"):
            with PlainTabPane(TABS[0][1], id="config"):
                yield UnitPreview(self.running_text, id="unit-preview")  # the Config pane replaces it: mount_form
            for tab_id, title in TABS[1:]:
                yield PlainTabPane(title, id=tab_id)  # filled by mount_tabs, after the first frame
        yield StableFooter(compact=True)  # with the loop's keys only, fits 80 columns (the rest: ? and ctrl+p)

    @property
    def form_mounted(self) -> bool:
        return self._form is not None and self._form.is_set()

    @property
    def tabs_mounted(self) -> bool:
        return self._mounting is not None and self._mounting.is_set()

    async def mount_form(self) -> None:
        """Replace the unit preview with the Config pane (form, editor, diff). Runs once; a second caller returns
        when the first one's mount is done, so it can then read the pane."""
        if self._form is not None:
            await self._form.wait()
            return
        self._form = asyncio.Event()
        with exit_held(self.app):  # closed while the fields mounted, Textual's Select raised NoMatches
            await self._mount_form(self._form)

    async def _mount_form(self, built: asyncio.Event) -> None:
        await self._composed.wait()  # a message right after a switch of host: the preview comes first
        from specdec_tui.ui.widgets.config_pane import ConfigPane

        pane = ConfigPane(self.running_text, draft=self.draft, id="config-pane")
        pane.display = False  # built out of sight, then swapped in at once: no frame shows half a form
        preview = self.query_one(UnitPreview)
        await self.query_one("#config", TabPane).mount(pane, before=preview)
        pane.display, preview.display = True, False
        await preview.remove()
        built.set()
        tabs = self.query_one(TabbedContent)
        if tabs.active == "config" and self.focused is self._start_focus:  # the user has not moved meanwhile
            self.focus_active_tab()

    async def mount_tabs(self) -> None:
        """Mount the content of every tab but Config (hidden on the first frame), after the form. Runs once;
        a second caller returns when the first one's mount is done, so it can then read any tab's widgets."""
        if self._mounting is not None:
            await self._mounting.wait()
            return
        self._mounting = asyncio.Event()
        await self.mount_form()
        from specdec_tui.ui.widgets.bench_table import BenchTable
        from specdec_tui.ui.widgets.doctor_section import DoctorSection
        from specdec_tui.ui.widgets.fleet_table import FleetTable
        from specdec_tui.ui.widgets.health_pane import HealthPane
        from specdec_tui.ui.widgets.journal_pane import JournalPane
        from specdec_tui.ui.widgets.tok_chart import TokChart
        from specdec_tui.ui.widgets.trade_off_chart import TradeOffChart
        from specdec_tui.ui.widgets.trials_list import TrialsList

        content: dict[str, list[Widget]] = {
            # side by side in the tab pane itself (layout: horizontal), not in a row container of their own: every
            # container paints and caches all its rows, and those caches are what each full collection walks
            "journal": [JournalPane(id="journal-pane", max_lines=self.journal_lines),
                        HealthPane(id="journal-health", classes=HEALTH_VIEW)],
            "health": [DoctorSection(id="doctor-section"), HealthPane(id="health-pane", classes=HEALTH_VIEW)],
            "bench": [Vertical(BenchTable(id="bench-table"), TokChart(id="tok-chart"), id="bench-main"),
                      HealthPane(id="health-side", classes=HEALTH_VIEW)],
            "trials": [TrialsList(id="trials-list"), TradeOffChart(id="trade-off-chart")],
            "fleet": [FleetTable(id="fleet-table")],
        }
        mounts = [self.query_one(f"#{tab_id}", TabPane).mount_all(widgets) for tab_id, widgets in content.items()]
        for mounted in mounts:
            await mounted
        self._health_views = [view for widgets in content.values() for view in widgets if isinstance(view, HealthPane)]
        self._mounting.set()

    def on_mount(self) -> None:
        draw_scroll_bars_as_strips()  # every scroll bar of the app, from here on (the journal's: at every batch)
        self._composed.set()
        self._start_focus = self.focused
        after_painted(self, self._after_first_frame)

    async def _after_first_frame(self) -> None:
        """The preview is on the terminal: the form now, then (after the form's own frame) the other tabs. Built in
        the screen's own message loop, as it is written: a key typed meanwhile is answered once the form is there,
        and the screen is not taken apart (the app closing) while the form's fields mount."""
        if self.app.return_code is not None:
            return  # the app is closing (q, a signal) before the form began: nothing to build
        await self.mount_form()
        if self.is_attached and self.app.is_running:  # not when the app closed while the form was built
            self.call_after_refresh(self._after_form_frame)

    async def _after_form_frame(self) -> None:
        from specdec_tui.ui.widgets.flag_form import FlagForm

        # the form's first frame drew stand-ins for its fields: the real ones now, in this loop (a key
        # typed meanwhile runs its bindings once it is there)
        await self.config_pane.query_one(FlagForm).use_real_fields()
        await self.mount_tabs()
        self.focus_active_tab()  # a tab key pressed before its content was there: the focus goes in now
        self.post_message(self.TabsMounted(self))

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """The first resume comes right after the mount, which styled every widget of the screen, and runs before
        Textual's own handler (a subclass's comes first): told not to, that one does not restyle them all again
        (a third of the first frame's styling). Later resumes, after a dialog, restyle as usual."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def on_resize(self, event: events.Resize) -> None:
        """Until the form is mounted, a Resize to the size the screen is already laid out at is not laid out again
        (Textual's own handler, which comes after this one, is told not to): the start's size reaches the screen
        twice more after its first frame (the app's first Resize and the driver's), and each relaid and repainted
        the whole screen, two frames of nothing new before the form could start. Later ones (a resume after
        ctrl+z sends the same size, to repaint the terminal) go through."""
        if not self.form_mounted and event.size == self.outer_size:
            event.prevent_default()
        self.set_class(is_wide(event.size.width), "-wide")

    @property
    def config_pane(self) -> ConfigPane:
        """The Config pane; only once `mount_form` is done (before, the tab shows the unit preview)."""
        return cast("ConfigPane", self.query_one("#config-pane"))

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
    def doctor_section(self) -> DoctorSection:
        return cast("DoctorSection", self.query_one("#doctor-section"))

    def show_doctor_badge(self) -> None:
        """The Health tab's title carries the count of active findings ("3 Health ⚠2")."""
        count = len(self.doctor_section.findings)
        title = dict(TABS)["health"] + (f" ⚠{count}" if count else "")
        self.query_one(TabbedContent).get_tab("health").label = title

    @property
    def health_views(self) -> list[HealthPane]:
        """The Health tab's pane and its copies beside the journal and the benchmark ([] before mount_tabs). Kept
        since they were mounted: a query walked the whole screen on every health change and journal figure."""
        return [view for view in self._health_views if view.is_attached]

    def action_show_tab(self, tab: str) -> None:
        """A tab key: show the tab and put the focus in it (also when the tab bar had it). The focus leaves the
        old tab now, not after the refresh: a focus left in a hidden pane would show that pane again (MainTabs)."""
        focused = self.focused
        old = next((node for node in focused.ancestors if isinstance(node, TabPane)), None) if focused else None
        if old is not None and old.id != tab:
            self.set_focus(None)
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
            if self.form_mounted:  # else the form focuses its first field when it arrives (mount_form)
                self.config_pane.focus_first_field()
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "discard_edit":  # offered only when there is an edit (the footer hides it otherwise)
            return self.form_mounted and self.config_pane.dirty
        return True

    def on_config_pane_edited(self, _: ConfigPane.Edited) -> None:
        self.refresh_bindings()  # "d Discard edit" comes and goes with the edit

    async def action_discard_edit(self) -> None:
        """Throw the edit away: the form shows the unit on the host again and its draft is gone."""
        await self.mount_form()
        pane = self.config_pane
        if not pane.dirty:
            self.notify("No edit to discard: the form shows the unit on the host.")
            return
        await pane.revert()
        self.notify("Edit discarded: the form shows the unit on the host again.")

    async def action_apply_fix(self) -> None:
        await self.mount_form()  # f right at start: the fix is for the form's unit, once it is there
        if self.query_one(TabbedContent).active == "health" and self.tabs_mounted:
            finding = self.doctor_section.first_fixable()
            if finding is not None:  # the doctor's fix, as an edit of the unit (pushed with p, as any edit)
                from specdec_tui.loop.doctor import apply_finding
                from specdec_tui.ui.widgets.doctor_section import fix_words

                error = await self.config_pane.apply_edit(lambda unit: apply_finding(unit, finding))
                self.notify(f"Could not apply the doctor's fix: {error}" if error else
                            f"Applied the doctor's fix for {finding.kind.value}: {fix_words(finding)} (p pushes it)",
                            severity="error" if error else "information")
                return
        pane = self.config_pane
        before = pane.text
        done = await pane.apply_fix()
        self.notify(done or "No issue with a suggested fix.", severity="information" if pane.text != before else "warning")
