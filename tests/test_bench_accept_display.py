"""Where a level's acceptance came from is shown next to it: the panel's bench table and the headless table."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from textual.app import App, ComposeResult

from specdec_tui.bench.events import LevelDone, LevelStarted, RunDone
from specdec_tui.cli.bench_output import level_json
from specdec_tui.cli.render import levels_table
from specdec_tui.core.results import AcceptSource, LevelResult
from specdec_tui.ui.widgets.bench_table import BenchTable


def level(c: int, server: float | None, client: float, source: AcceptSource, srv_avg: float | None = None) -> LevelResult:
    return LevelResult(concurrency=c, requests=4, output_tok_s=100.0, accept_length_server=server,
                       accept_length_client=client, accept_length_source=source.value,
                       server_avg_accept_length=srv_avg)


LEVELS = [
    level(1, 3.71, 3.70, AcceptSource.SERVER_COUNTERS),
    level(4, 3.52, 3.50, AcceptSource.REQUEST_DETAILS),
    level(16, None, 2.71, AcceptSource.STREAM_ESTIMATE),
]


class BenchHost(App):
    def compose(self) -> ComposeResult:
        yield BenchTable(id="bench")


async def test_panel_table_marks_each_levels_source() -> None:
    app = BenchHost()
    async with app.run_test(size=(140, 30)) as pilot:
        table = app.query_one(BenchTable)
        table.start_run([1, 4, 16])
        for lv in LEVELS:
            table.apply_event(LevelStarted(concurrency=lv.concurrency, planned=4))
            table.apply_event(LevelDone(lv))
        await pilot.pause()
        assert table.cell_text(1, "accept") == "3.71/3.70 ctr"
        assert table.cell_text(4, "accept") == "3.52/3.50 req"
        assert table.cell_text(16, "accept") == "–/2.71 est"
        table.apply_event(RunDone(levels=list(LEVELS)))
        await pilot.pause()
        assert table.status.endswith("; accept: ctr = server counters, req = per-request details, "
                                     "est = estimated from the stream)")


def test_headless_table_shows_the_levels_figure_and_its_source() -> None:
    console = Console(width=160, record=True)
    console.print(levels_table(LEVELS))
    text = console.export_text()
    rows = [line for line in text.splitlines() if "│" in line]
    # the accept column is the tenth (a "srv avg" column now follows it: it used to end the row's figures)
    assert any(r.split("│")[1].strip() == "1" and r.split("│")[10].strip() == "3.71 ctr" for r in rows)
    assert any(r.split("│")[1].strip() == "16" and r.split("│")[10].strip() == "2.71 est" for r in rows)
    legend = "accept: ctr = server counters, req = per-request details, est = estimated from the stream"
    assert legend in " ".join(text.split())  # the caption wraps to the table's width


# What SGLang's bench_serving prints as "Accept length" (/server_info's avg_spec_accept_length, the server's mean
# since it started) sits beside the level's own figure, labelled, in the panel, the headless table and the JSON.
WITH_SERVER_AVG = [
    level(1, 3.71, 3.70, AcceptSource.SERVER_COUNTERS, srv_avg=3.64),
    level(4, 3.52, 3.50, AcceptSource.SERVER_COUNTERS, srv_avg=3.58),
]
SERVER_AVG_LEGEND = ("srv avg = /server_info avg_spec_accept_length, the server's mean since it started "
                     '(bench_serving\'s "Accept length")')


def show_run(table: BenchTable, levels: Sequence[LevelResult]) -> None:
    """A run of `levels` as the engine's events reach the panel's table."""
    table.start_run([lv.concurrency for lv in levels])
    for lv in levels:
        table.apply_event(LevelStarted(concurrency=lv.concurrency, planned=4))
        table.apply_event(LevelDone(lv))
    table.apply_event(RunDone(levels=list(levels)))


async def test_panel_table_shows_the_servers_own_average_beside_the_levels_figure() -> None:
    app = BenchHost()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(BenchTable)
        show_run(table, WITH_SERVER_AVG)
        await pilot.pause()
        assert table.cell_text(1, "accept") == "3.71/3.70 ctr" and table.cell_text(1, "srv_avg") == "3.64"
        assert table.cell_text(4, "srv_avg") == "3.58"
        assert SERVER_AVG_LEGEND in table.status


def test_headless_table_and_json_show_the_servers_own_average() -> None:
    console = Console(width=180, record=True)
    console.print(levels_table(WITH_SERVER_AVG))
    text = console.export_text()
    header = next(line for line in text.splitlines() if "conc" in line)
    assert [c.strip() for c in header.split("┃")][10:12] == ["accept", "srv avg"]
    rows = [line for line in text.splitlines() if "│" in line]
    assert any(r.split("│")[1].strip() == "4" and r.split("│")[11].strip() == "3.58" for r in rows)
    assert SERVER_AVG_LEGEND in " ".join(text.split())
    assert level_json(WITH_SERVER_AVG[0])["accept_length"] == {
        "server": 3.71, "client": 3.70, "source": "server counters", "server_info_avg_spec_accept_length": 3.64}


async def test_panel_says_which_of_the_accept_pair_is_the_servers_and_which_the_clients() -> None:
    """newcomer44: "accept s/c 1.64/1.61 ctr" — the legend said what ctr meant, nothing said s/c was server/client."""
    app = BenchHost()
    async with app.run_test(size=(140, 30)) as pilot:
        table = app.query_one(BenchTable)
        show_run(table, LEVELS[:1])
        await pilot.pause()
        assert "accept" in table.visible_columns
        assert ("(accept s/c = the server's / the client's (tokens per stream chunk); "
                "accept: ctr = server counters)") in table.status, table.status


async def test_at_80_columns_the_legend_names_no_column_the_table_does_not_show() -> None:
    """newcomer44, the demo under tmux at 80×24: the table showed no "srv avg" column and its legend took two of
    the chart's lines explaining "srv avg = /server_info avg_spec_accept_length, …"."""
    app = BenchHost()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(BenchTable)
        show_run(table, WITH_SERVER_AVG)
        await pilot.pause()
        assert "srv_avg" not in table.visible_columns and "accept" in table.visible_columns
        assert "srv avg" not in table.status, table.status
        assert table.status.endswith("(accept s/c = the server's / the client's (tokens per stream chunk); "
                                     "accept: ctr = server counters)"), table.status
