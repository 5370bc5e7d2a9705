"""BenchTable in a tiny host app, fed the engine's real event objects."""

from __future__ import annotations

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
    table.on_event(LevelStarted(concurrency=1, planned=8))  # the name the app shell calls
    table.on_event(LevelProgress(concurrency=1, done=4, errors=0, tokens=1000, tok_s=230.0))
    table.on_event(LevelDone(level(1, 234.0)))
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
        table.apply_event(LevelProgress(concurrency=1, done=4, errors=0, tokens=1000, tok_s=230.0))
        assert table.cell_text(1, "tok_s") == "230.0"
        assert table.cell_text(1, "progress").endswith("50%")


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
        assert table.table.get_cell("1", "delta").style == better
        assert table.table.get_cell("4", "delta").style == worse


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
