"""Goodput in the panel's bench table (issue 33): with an SLO, each level shows the requests/s and tok/s of the
requests that met it, beside its tok/s — kept when the terminal is 80 columns; without an SLO no such column is
offered. A rate search's trial (several open-loop levels, all of concurrency 0) shows one row per rate."""

from __future__ import annotations

from textual.app import App, ComposeResult

from specdec_tui.bench.events import LevelDone, LevelStarted, RunDone
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.ui.widgets.bench_table import BenchTable

SLO = ("ttft_p99=2s", "itl_p99=50ms")


def level(c: int, tok_s: float, good: int, *, rate: float | None = None) -> LevelResult:
    requests, duration = 40, 10.0
    return LevelResult(concurrency=c, requests=requests, output_tokens=int(tok_s * duration), duration_s=duration,
                       output_tok_s=tok_s, per_request_tok_s=Dist(p50=tok_s / max(c, 1)),
                       ttft_ms=Dist(p50=300.0, p99=900.0 + 40 * c), itl_ms=Dist(p50=12.5, p99=30.0),
                       tpot_ms=Dist(p50=4.3), accept_length_server=3.4, accept_length_client=3.1, rate=rate,
                       good_requests=good, goodput_req_s=good / duration,
                       goodput_tok_s=tok_s * good / requests)


RUN = [level(1, 120.0, 40), level(4, 290.0, 38), level(16, 402.1, 21), level(64, 426.2, 3)]


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield BenchTable(id="bench", clock=lambda: 0.0)

    def on_mount(self) -> None:
        table = self.query_one(BenchTable)
        table.start_run([1, 4, 16, 64], slo=SLO)
        for lv in RUN:
            table.apply_event(LevelStarted(lv.concurrency, planned=lv.requests))
            table.apply_event(LevelDone(lv))
        table.apply_event(RunDone(levels=RUN))


async def test_goodput_columns_show_with_an_slo_and_fit_80_columns() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.query_one(BenchTable)
        assert {"good_req", "good_tok"} <= set(table.visible_columns)
        assert [table.cell_text(c, "good_req") for c in (1, 4, 16, 64)] == ["4.00", "3.80", "2.10", "0.30"]
        assert [table.cell_text(c, "good_tok") for c in (1, 4, 16, 64)] == ["120.0", "275.5", "211.1", "32.0"]
        assert "good/s" in [str(col.label) for col in table.table.columns.values()]


async def test_no_goodput_column_without_an_slo() -> None:
    app = App[None]()
    async with app.run_test(size=(200, 24)) as pilot:
        table = BenchTable(id="bench")
        await app.mount(table)
        plain = [LevelResult(concurrency=c, requests=8, output_tok_s=100.0 * c, duration_s=1.0) for c in (1, 4)]
        table.show_results(plain)
        await pilot.pause()
        assert not {"good_req", "good_tok"} & set(table.visible_columns)
        table.show_results(RUN[:2])  # a stored trial that measured goodput shows it, whatever the profile says now
        await pilot.pause()
        assert {"good_req", "good_tok"} <= set(table.visible_columns)


async def test_a_rate_search_trial_shows_a_row_per_rate() -> None:
    app = App[None]()
    async with app.run_test(size=(120, 24)) as pilot:
        table = BenchTable(id="bench")
        await app.mount(table)
        probes = [level(0, 300.0, 40, rate=8.0), level(0, 410.0, 2, rate=32.0), level(0, 380.0, 30, rate=16.0)]
        table.show_results(probes, slo=SLO)
        await pilot.pause()
        assert [table.cell_text(key, "c") for key in (-1, -2, -3)] == ["8/s", "16/s", "32/s"]
        assert [table.cell_text(key, "good_req") for key in (-1, -2, -3)] == ["4.00", "3.00", "0.20"]


def test_bench_table_with_goodput_snapshot_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(Host(), terminal_size=(80, 24))
