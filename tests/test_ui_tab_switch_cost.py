"""What a tab switch does (issue 34, point 3: tab keys were the slowest keys of a sweep; bench/tab_switch.py counts
their instructions). A switch lays the screen out once, restyles only the widgets whose looks it changes (the two
tab labels, the widget that loses the focus and the one that gets it), and redraws no chart whose size it kept.
Counted through public APIs: the screen's layout signal, the app's stylesheet, the chart's `render`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import pytest
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import TabbedContent

from specdec_tui.hosts.base import JournalRecord
from tests.test_report_html import seed_session

from .ui_helpers import offline_app, started, wait_for

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_switch_lays_out_once_and_restyles_only_the_tab_labels_and_the_focus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        for key in "234561":  # every tab drawn once
            await pilot.press(key)
            await pilot.pause()
        restyled: list[DOMNode] = []
        update_nodes = Stylesheet.update_nodes

        def counted(self: Stylesheet, nodes: Iterable[DOMNode], animate: bool = False) -> None:
            nodes = list(nodes)
            restyled.extend(nodes)
            update_nodes(self, nodes, animate=animate)

        monkeypatch.setattr(Stylesheet, "update_nodes", counted)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append, immediate=True)
        tabs = app.screen.query_one(TabbedContent)
        for key, tab in (("2", "journal"), ("4", "bench"), ("5", "trials"), ("6", "fleet"), ("3", "health"),
                         ("1", "config")):
            before, previous = app.screen.focused, tabs.active
            restyled.clear()
            layouts.clear()
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab
            after = app.screen.focused
            assert after is not None and tabs.get_pane(tab) in after.ancestors, f"key {key}: the focus is in the tab"
            expected = {tabs.get_tab(tab), tabs.get_tab(previous), before, after}
            widgets = {node for node in restyled if isinstance(node, Widget)}
            # a widget's own parts (Select's current value, its overlay) come with it: restyled as that widget's
            outside = {node for node in widgets if not any(node is e or e in node.ancestors for e in expected if e is not None)}
            assert outside == set(), f"key {key} restyled {len(outside)} more widgets, e.g. {sorted(map(repr, outside))[:5]}"
            assert len(layouts) == 1, f"key {key}: {len(layouts)} layouts"


async def test_showing_the_trials_tab_again_does_not_redraw_its_chart() -> None:
    """Every show of the Trials tab sends its chart a Resize of the size it has: with a trial selected, the chart
    was redrawn each time (the plot rebuilt, every row of it rendered again, ~5 ms a switch)."""
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("5")
        chart = app.main.trade_off_chart
        await wait_for(pilot, lambda: chart.points != [] and chart.selected is not None, "the chart with a selection")
        await pilot.press("down")
        await wait_for(pilot, lambda: chart.selected == app.main.trials_list.current_trial_id, "the cursor's trial")
        await pilot.pause()
        renders: list[int] = []
        render = chart.render

        def counted() -> object:
            renders.append(1)
            return render()

        chart.render = counted  # type: ignore[method-assign]
        for _ in range(3):
            await pilot.press("4")
            await pilot.pause()
            await pilot.press("5")
            await pilot.pause()
        assert renders == []
        width = chart.size.width
        await pilot.resize_terminal(120, 40)  # a real resize still redraws it, label placed for the new width
        await wait_for(pilot, lambda: chart.size.width != width and renders != [], "the chart drawn at its new width")


async def test_a_hidden_journal_takes_its_lines_without_laying_the_screen_out_and_shows_them_all_when_shown() -> None:
    """Behind another tab (the Bench tab all through a sweep) every batch of journal lines re-laid out the whole
    screen (~9 ms each) for a view no one saw; the switch that shows the journal lays it out once, its scroll bar
    and its last line there."""
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("4")
        await pilot.pause()
        pane, log = app.main.journal_pane, app.main.query_one("#journal-log", Widget)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append, immediate=True)
        for batch in range(6):  # past a screenful, a few lines at a time (as a server logs)
            pane.add_records([JournalRecord(cursor=f"c{batch}-{i}", timestamp=T0, message=f"line {batch * 20 + i}")
                              for i in range(20)])
            lines = (batch + 1) * 20
            await wait_for(pilot, lambda: log.virtual_size.height >= lines, f"batch {batch} taken")  # noqa: B023
            await pilot.pause()
        assert layouts == [], f"{len(layouts)} layouts of the screen for a hidden journal"
        await pilot.press("2")
        await pilot.pause()
        assert log.is_on_screen and log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y  # following its end
        assert log.show_vertical_scrollbar
        assert "line 119" in "".join(strip.text for strip in log.render_lines(log.content_region.reset_offset))


async def test_the_bench_warnings_line_lays_the_screen_out_only_when_its_text_changes() -> None:
    """`Static.update` lays the whole screen out; the warnings line was updated at every new run and every level,
    with no warning at all (the line not even displayed) in most runs."""
    from textual import messages

    from specdec_tui.bench.events import LevelDone, LevelStarted
    from specdec_tui.ui.widgets.bench_table import BenchTable
    from tests.test_ui_widgets_bench import BenchHost, level

    asked: list[Widget] = []

    def hook(message: object) -> None:
        if isinstance(message, messages.Layout) and isinstance(message.widget, Widget):
            asked.append(message.widget)

    app = BenchHost()
    async with app.run_test(size=(120, 30), message_hook=hook) as pilot:
        table = app.query_one(BenchTable)
        line = table.query_one("#bench-warnings", Widget)
        await pilot.pause()
        asked.clear()
        for _ in range(2):  # two runs, no warning
            table.start_run([1, 4])
            for c in (1, 4):
                table.apply_event(LevelStarted(concurrency=c, planned=8))
                table.apply_event(LevelDone(level(c, 200.0 * c)))
            await pilot.pause()
        assert line not in asked and not line.display
        table.apply_event(LevelDone(level(4, 800.0, warnings=["acceptance looks inflated"])))
        await pilot.pause()
        assert line in asked and line.display and "inflated" in str(line.render())
        table.start_run([1, 4])  # a new run: the line goes
        await pilot.pause()
        assert not line.display
