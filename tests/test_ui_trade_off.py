"""The Trials tab's trade-off view under Pilot and as snapshots: each trial a point (c=1 per-request tok/s against
best tok/s), the Pareto front marked, the trial under the cursor highlighted; at 80×24 and 160×48."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from specdec_tui.core.trade_off import pareto_front, trade_off_points
from specdec_tui.ui.widgets.trade_off_chart import TradeOffChart
from tests.test_report_html import seed_session

from .ui_helpers import offline_app, wait_for


async def test_the_trials_tab_shows_the_trade_off_and_follows_the_cursor() -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("5")
        chart = app.main.trade_off_chart
        await wait_for(pilot, lambda: len(chart.points) == 4, "the four trials as points")
        assert chart.front == {1, 2, 3}  # trial 4 is beaten by trial 3 on both axes
        await wait_for(pilot, lambda: chart.selected == app.main.trials_list.current_trial_id is not None,
                       "the cursor's trial highlighted from the start")
        start = chart.selected
        assert start == 4  # the newest trial, where the list opens
        app.main.trials_list.table.focus()
        await pilot.press("up", "up")
        await wait_for(pilot, lambda: chart.selected == 2, "the cursor's trial highlighted")


class ChartHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TradeOffChart(id="chart")

    def on_mount(self) -> None:
        chart = self.query_one(TradeOffChart)
        points = trade_off_points(seed_session())
        chart.set_points(points, pareto_front(points))
        chart.select(3)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_trade_off_chart_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(ChartHost(), terminal_size=size)


async def test_the_bench_chart_shows_the_newest_trial_beside_the_one_under_the_trials_cursor() -> None:
    app = offline_app(trials=seed_session().trials)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("5")
        chart = app.main.tok_chart
        await wait_for(pilot, lambda: [label for label, _ in chart.series] == ["#3 steps=3", "#4 steps=4"],
                       "the newest trial beside the one before it")
        app.main.trials_list.table.focus()
        await pilot.press("up", "up", "up")  # the cursor on trial 1: the comparison the operator picks
        await wait_for(pilot, lambda: [label for label, _ in chart.series] == ["#1 steps=1", "#4 steps=4"],
                       "the newest trial beside the cursor's")
        assert chart.series[0][1][0] == (1, 123.0) and chart.series[1][1][-1] == (64, 1212.0)


class TokChartHost(App[None]):
    def __init__(self, live: bool) -> None:
        super().__init__()
        self.live = live

    def compose(self) -> ComposeResult:
        from specdec_tui.ui.widgets.tok_chart import TokChart

        yield TokChart(id="chart")

    def on_mount(self) -> None:
        from specdec_tui.ui.widgets.tok_chart import TokChart

        trials = seed_session().trials
        current = list(trials[2].levels[:2]) if self.live else list(trials[2].levels)  # a run two levels in
        self.query_one(TokChart).set_trials([("#1 steps=1", list(trials[0].levels)),
                                             ("#3 steps=3" + (" (running)" if self.live else ""), current)])


@pytest.mark.parametrize("live", [True, False], ids=["live", "finished"])
def test_bench_chart_snapshot_at_80x24(snap_compare, live: bool) -> None:
    assert snap_compare(TokChartHost(live), terminal_size=(80, 24))


class OneTrialHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TradeOffChart(id="chart")

    def on_mount(self) -> None:
        chart = self.query_one(TradeOffChart)
        points = trade_off_points(seed_session())[2:3]  # the first benchmark of a session: one point
        chart.set_points(points, pareto_front(points))
        chart.select(points[0].trial_id)


async def test_one_trial_is_a_point_inside_the_chart_with_its_whole_label() -> None:
    """After the first benchmark the chart has one point: plotext sized its axis to the label, the point on the
    axis's edge and the label cut to "#"."""
    app = OneTrialHost()
    async with app.run_test(size=(100, 24)) as pilot:
        chart = app.query_one(TradeOffChart)
        await pilot.pause()
        rows = [chart.render_line(y).text for y in range(chart.size.height)]
        label = f"#3 {chart.points[0].label}"
        assert any(label in row for row in rows), rows
        marker_row = next(row for row in rows if "●" in row)
        plot_left = min(i for i in (marker_row.find("┤"), marker_row.find("│")) if i >= 0) + 1  # a tick's row or not
        marker_at = (marker_row.index("●") - plot_left) / (len(marker_row.rstrip()) - plot_left)
        assert 0.2 < marker_at < 0.8, marker_row  # the point well inside the plot, not on its edge


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_y_axis_ticks_are_round_and_evenly_spaced(size: tuple[int, int]) -> None:
    """Issue 35 (10): at 80×24 the y axis read 2340.0, 2187.9, 1883.8, 1731.8, 1427.7: plotext left out ticks
    that would share a row, so the gaps had two sizes, and the values had noise digits."""
    from specdec_tui.ui.widgets.tok_chart import TokChart

    class Charts(App[None]):
        def compose(self) -> ComposeResult:
            yield TradeOffChart(id="trade")
            yield TokChart(id="tok")

        def on_mount(self) -> None:
            points = trade_off_points(seed_session())
            self.query_one(TradeOffChart).set_points(points, pareto_front(points))
            self.query_one(TokChart).set_trials([(f"#{t.id}", t.levels) for t in seed_session().trials])

    app = Charts()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for chart in (app.query_one(TradeOffChart), app.query_one(TokChart)):
            lines = str(chart.render()).splitlines()
            ticks = [(row, line.split("┤")[0].strip()) for row, line in enumerate(lines) if "┤" in line]
            assert len(ticks) >= 2, lines
            values = [float(label.replace(",", "")) for _, label in ticks]
            assert all(v == round(v, 1) for v in values), values
            gaps = {round(a - b, 6) for a, b in zip(values, values[1:], strict=False)}
            rows = {b - a for (a, _), (b, _) in zip(ticks, ticks[1:], strict=False)}
            assert len(gaps) == 1 and max(rows) - min(rows) <= 1, (values, ticks)
