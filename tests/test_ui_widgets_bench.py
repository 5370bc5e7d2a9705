"""BenchTable in a tiny host app, fed the engine's real event objects."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from specdec_tui.bench.events import LevelDone, LevelProgress, LevelStarted, RunDone
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.ui.widgets.bench_table import BenchTable


def level(c: int, tok_s: float, *, errors: int = 0, estimated: bool = False, warnings=()) -> LevelResult:
    return LevelResult(
        concurrency=c,
        requests=8,
        errors=errors,
        output_tokens=int(tok_s * 10),
        duration_s=10.0,
        output_tok_s=tok_s,
        per_request_tok_s=Dist(p50=tok_s / c),
        ttft_ms=Dist(p50=45.0, p99=180.0),
        tpot_ms=Dist(p50=1000 / (tok_s / c)),
        accept_length_server=3.4,
        accept_length_client=3.1,
        estimated=estimated,
        warnings=list(warnings),
        error_kinds={"timeout": errors} if errors else {},
    )


PREVIOUS = [level(1, 186.0), level(4, 520.0), level(16, 900.0)]


class BenchHost(App):
    def compose(self) -> ComposeResult:
        yield BenchTable(id="bench")


def feed_run(table: BenchTable) -> None:
    table.start_run([1, 4, 16], previous=PREVIOUS)
    table.apply_event(LevelStarted(concurrency=1, planned=8))
    table.apply_event(LevelProgress(concurrency=1, done=4, errors=0, tokens=1000, tok_s=230.0))
    table.apply_event(LevelDone(level(1, 234.0)))
    table.apply_event(LevelStarted(concurrency=4, planned=8))
    table.apply_event(LevelProgress(concurrency=4, done=2, errors=1, tokens=500, tok_s=480.0))
    table.apply_event(LevelDone(level(4, 468.0, errors=1, estimated=True, warnings=["acceptance looks inflated"])))
    table.apply_event(RunDone(levels=[], cancelled=True))


async def test_rows_prefilled_pending_then_progress_fills_cells() -> None:
    app = BenchHost()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(BenchTable)
        table.start_run([1, 4, 16, 32, 64], previous=PREVIOUS)
        await pilot.pause()
        assert [table.cell_text(c, "c") for c in (1, 4, 16, 32, 64)] == ["1", "4", "16", "32", "64"]
        assert table.cell_text(32, "tok_s") == "…"
        assert table.cell_text(16, "prev") == "900.0"
        assert table.cell_text(64, "prev") == "–"

        table.apply_event(LevelStarted(concurrency=1, planned=8))
        # Newcomer pass (issue 35): a level with no token back yet read "0.0" tok/s, as if measured at zero.
        table.apply_event(LevelProgress(concurrency=1, done=0, errors=0, tokens=0, tok_s=0.0))
        assert table.cell_text(1, "tok_s") == "…"
        table.apply_event(LevelProgress(concurrency=1, done=4, errors=0, tokens=1000, tok_s=230.0))
        assert table.cell_text(1, "tok_s") == "230.0"
        assert table.cell_text(1, "progress").endswith(" 4/8")  # requests done / planned
        assert table.status.startswith("Level c=1: 4/8 requests, about ") and table.status.endswith(" s left")


async def test_done_levels_show_delta_against_previous_and_warnings() -> None:
    app = BenchHost()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(BenchTable)
        feed_run(table)
        await pilot.pause()
        assert table.cell_text(1, "tok_s") == "234.0"
        assert table.cell_text(1, "delta") == "+25.8%"  # 186 → 234
        assert table.cell_text(4, "delta") == "-10.0%"  # 520 → 468
        assert table.cell_text(4, "tok_s") == "468.0~"  # estimated
        assert table.cell_text(4, "errors") == "1"
        assert table.cell_text(1, "accept") == "3.40/3.10"
        assert table.cell_text(16, "progress") == "not run"
        assert "cancelled" in table.status
        assert any("inflated" in w for w in table.warnings)
        assert any("1 failed request(s) (timeout ×1)" in w for w in table.warnings)
        assert any("estimated" in w for w in table.warnings)
        better = table.get_component_rich_style("bench--better")
        worse = table.get_component_rich_style("bench--worse")
        better_cell, worse_cell = table.table.get_cell("1", "delta").style, table.table.get_cell("4", "delta").style
        assert (better_cell.color, better_cell.bold) == (better.color, better.bold)
        assert (worse_cell.color, worse_cell.bold) == (worse.color, worse.bold)
        assert better_cell.bgcolor is None and worse_cell.bgcolor is None  # the row's own background shows


async def test_show_results_without_previous_and_failed_run_status() -> None:
    app = BenchHost()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(BenchTable)
        table.show_results([level(4, 500.0), level(1, 200.0)])
        await pilot.pause()
        assert list(table.results) == [1, 4]
        assert table.cell_text(4, "delta") == "–"
        table.apply_event(RunDone(levels=[], error="cannot reach http://127.0.0.1:1/v1/models"))
        assert table.status.startswith("Benchmark failed: cannot reach")


def test_snapshot_bench_table_filled(snap_compare) -> None:
    async def run(pilot) -> None:
        feed_run(pilot.app.query_one(BenchTable))
        await pilot.pause()

    assert snap_compare(BenchHost(), run_before=run, terminal_size=(120, 16))


async def test_a_caveat_shared_by_levels_is_listed_once_and_a_cut_level_says_cancelled() -> None:
    app = BenchHost()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(BenchTable)
        table.start_run([1, 4, 16])
        table.apply_event(LevelDone(level(1, 150.0, warnings=["temperature 0 inflates acceptance"])))
        table.apply_event(LevelDone(level(4, 250.0, errors=1, warnings=["temperature 0 inflates acceptance"])))
        table.apply_event(LevelStarted(concurrency=16, planned=8))
        table.apply_event(RunDone(levels=[], cancelled=True))
        await pilot.pause()
        assert table.warnings == ["c=1,4: temperature 0 inflates acceptance", "c=4: 1 failed request(s) (timeout ×1)"]
        assert table.cell_text(16, "progress") == "cancelled"


def _contrast(a, b) -> float:
    """WCAG contrast ratio of two rich colors."""
    from textual.color import Color

    def lum(c) -> float:
        r, g, b = (x / 255 for x in Color.from_rich_color(c).rgb)
        f = lambda v: v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4  # noqa: E731
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _cell_segments(table: BenchTable, row: int, needle: str):
    """The rendered segments of the data table's `row` (0 = first data row) that draw `needle`."""
    strip = table.table.render_line(row + 1)  # line 0 is the header
    text = "".join(s.text for s in strip)
    start = text.index(needle)
    segments, at = [], 0
    for segment in strip:
        end = at + len(segment.text)
        if end > start and at < start + len(needle) and segment.text.strip():
            segments.append(segment)
        at = end
    return segments


@pytest.mark.parametrize("theme", ["specdec-dark", "textual-light"])
async def test_delta_and_finished_bars_are_readable_in_the_cursor_row_and_the_others(theme: str) -> None:
    from specdec_tui.ui.themes import register_themes

    app = BenchHost()
    async with app.run_test(size=(140, 16)) as pilot:
        register_themes(app)
        app.theme = theme
        await pilot.pause()
        table = app.query_one(BenchTable)
        table.show_results([level(1, 234.0), level(4, 468.0)], previous=PREVIOUS)
        table.table.focus()
        table.table.move_cursor(row=0)
        await pilot.pause()
        assert table.cell_text(1, "progress") == "━━━━━━━━ 100%"  # a line, not a slab of blocks
        for row, delta in ((0, "+25.8%"), (1, "-10.0%")):
            for needle in (delta, "━━━━━━━━"):
                for segment in _cell_segments(table, row, needle):
                    style = segment.style
                    assert style.color is not None and style.bgcolor is not None
                    assert _contrast(style.color, style.bgcolor) >= 3.0, (theme, row, needle, style)
        cursor_bg = table.table.get_component_rich_style("datatable--cursor").bgcolor
        assert all(s.style.bgcolor == cursor_bg for s in _cell_segments(table, 0, "+25.8%"))


async def test_a_table_reset_for_a_run_still_answers_as_a_running_widget() -> None:
    """Issue 34: the table kept its running levels in `_running`, Textual's own flag for a message pump that is
    processing (read by `is_running` and the idle check): after a reset it was `{}`, so Textual took the mounted
    table for a stopped one. A reset for a run, levels in flight and a finished run leave the widget running."""
    app = BenchHost()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(BenchTable)
        table.start_run([1, 4], previous=PREVIOUS)
        assert table.is_running is True
        table.apply_event(LevelStarted(concurrency=1, planned=8))
        assert table.is_running is True
        table.apply_event(RunDone(levels=[], cancelled=True))
        table.show_results([level(1, 200.0)])
        await pilot.pause()
        assert table.is_running is True and table.cell_text(1, "tok_s") == "200.0"


async def test_a_level_where_every_request_failed_is_no_figure_and_no_point() -> None:
    """Issue 35 (10): a level where every request failed read "0.0" tok/s, the summary "Peak 0.0 tok/s at c=1",
    and the chart drew its line down to 0 and back across it."""
    from specdec_tui.ui.widgets.tok_chart import TokChart, _measured_runs

    class Both(App):
        def compose(self) -> ComposeResult:
            yield BenchTable(id="bench")
            yield TokChart(id="chart")

    failed = LevelResult(concurrency=4, requests=8, errors=8, error_kinds={"http 500": 8})
    app = Both()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(BenchTable)
        table.show_results([failed])
        await pilot.pause()
        assert table.cell_text(4, "tok_s") == "failed" and "0.0" not in table.status
        assert "Every request failed at c=4" in table.status, table.status
        table.show_results([level(1, 200.0), failed, level(16, 900.0)])
        await pilot.pause()
        assert "Peak 0.0" not in table.status and "every request failed at c=4" in table.status
        chart = app.query_one(TokChart)
        chart.set_trials([("steps=3", [level(1, 200.0), failed, level(16, 900.0)])])
        await pilot.pause()
        assert [c for c, tok_s in chart.series[0][1] if tok_s == tok_s] == [1, 16]  # NaN: not a point
        assert [[c for c, _ in run] for run in _measured_runs(chart.series[0][1])] == [[1], [16]]  # two lines
