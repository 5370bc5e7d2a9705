"""The panel's bench table on an open-loop profile (issue 33): the events of a real run at a rate against the truth
server fill one row named by its rate, with the in-flight count in the status while it runs — not a "0" level
nor the profile's unused concurrency rows."""

from __future__ import annotations

from textual.app import App, ComposeResult

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, LevelProgress
from specdec_tui.core.config import BenchProfile
from specdec_tui.ui.widgets.bench_table import BenchTable
from tests.truth_server import TruthServer


class BenchHost(App[None]):
    def compose(self) -> ComposeResult:
        yield BenchTable(id="bench")


async def test_an_open_loop_run_shows_one_row_named_by_its_rate_and_the_in_flight_count() -> None:
    events: list[BenchEvent] = []
    profile = BenchProfile(rate=100.0, requests=60, warmup=0, max_tokens=2, arrivals="constant")
    async with TruthServer(default_ttft_ms=200.0) as s:
        await drive_benchmark(s.url, profile, events.append)
    progress = next(ev for ev in events if isinstance(ev, LevelProgress) and ev.in_flight > 0)
    app = BenchHost()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(BenchTable)
        table.start_run([0])
        table.apply_event(events[0])
        table.apply_event(progress)
        await pilot.pause()
        assert table.cell_text(0, "c") == "open"
        status = str(table.query_one("#bench-status").render())
        assert f"{progress.in_flight} in flight" in status
        for ev in events[1:]:
            table.apply_event(ev)
        await pilot.pause()
        assert table.cell_text(0, "c") == "100/s"
        assert list(table.results) == [0] and table.cell_text(0, "tok_s") != "…"
