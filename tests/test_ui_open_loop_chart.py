"""Open-loop levels on the Bench chart (issue 33): when the newest trial ran at request rates (a `--rate` benchmark or
a rate search's probes), the chart draws tok/s against the rate — rates as tick labels, the axis named — and says how
many closed-loop trials it left off that axis; a closed-loop newest trial keeps the concurrency axis."""

from __future__ import annotations

from textual.app import App, ComposeResult

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.ui.widgets.tok_chart import TokChart


class ChartHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TokChart(id="chart")


def closed(c: int, tok_s: float) -> LevelResult:
    return LevelResult(concurrency=c, requests=32, output_tokens=8192, duration_s=20.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=tok_s / c))


def opened(rate: float, tok_s: float) -> LevelResult:
    return LevelResult(concurrency=0, requests=80, output_tokens=8192, duration_s=10.0, output_tok_s=tok_s, rate=rate)


def frame(chart: TokChart) -> list[str]:
    return chart.render().plain.splitlines()  # type: ignore[union-attr]


async def test_a_rate_trial_is_drawn_against_the_rate() -> None:
    app = ChartHost()
    async with app.run_test(size=(80, 20)) as pilot:
        chart = app.query_one(TokChart)
        search = [opened(8.0, 300.0), opened(32.0, 410.0), opened(16.0, 380.0), opened(12.5, 350.0)]
        chart.set_trials([("#1 baseline", [closed(1, 120.0), closed(4, 290.0)]), ("#2 max rate ≈ 14/s", search)])
        await pilot.pause()
        assert chart.by_rate
        assert chart.series == [("#2 max rate ≈ 14/s", [(8.0, 300.0), (12.5, 350.0), (16.0, 380.0), (32.0, 410.0)])]
        lines = frame(chart)
        assert "tok/s vs request rate (req/s) (1 trial(s) at a concurrency not drawn)" in lines[0]
        axis = lines[next(i for i, line in enumerate(lines) if "└" in line) + 1].split()
        assert axis[-1] == "32" and set(axis) <= {"8", "12.5", "16", "32"}, axis
        assert any("request rate (req/s)" in line for line in lines[-3:])


async def test_a_closed_loop_newest_trial_keeps_the_concurrency_axis() -> None:
    app = ChartHost()
    async with app.run_test(size=(80, 20)) as pilot:
        chart = app.query_one(TokChart)
        chart.set_trials([("#1 at 12/s", [opened(12.0, 350.0)]), ("#2 steps=3", [closed(1, 120.0), closed(16, 402.0)])])
        await pilot.pause()
        assert not chart.by_rate
        assert chart.series == [("#2 steps=3", [(1, 120.0), (16, 402.0)])]
        assert "tok/s vs concurrency (1 trial(s) at a rate not drawn)" in frame(chart)[0]
