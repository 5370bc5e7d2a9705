"""Issue 17 point 2: levels above the server's max running requests are marked as queueing, and the summary
names the best level within the profile's TTFT p99 limit, not only the peak (one owner: core.latency)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from specdec_tui.bench.events import LevelDone, LevelProgress, LevelStarted, RunDone
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.latency import LatencyLimit, pick
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.ui.widgets.bench_table import BenchTable

TEMP0 = ("temperature 0 with ignore_eos: greedy output runs past its natural end into repetition, so speculative "
         "acceptance (and tok/s) is inflated compared with real traffic; decide with temperature > 0 and the "
         "realistic prompts")


def level(c: int, tok_s: float, ttft_p99_ms: float, *, warnings: tuple[str, ...] = ()) -> LevelResult:
    return LevelResult(concurrency=c, requests=32, output_tokens=int(tok_s * 10), duration_s=10.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=tok_s / c), ttft_ms=Dist(p50=ttft_p99_ms / 2, p99=ttft_p99_ms),
                       tpot_ms=Dist(p50=4.3), itl_ms=Dist(p50=12.5, p99=30.0), accept_length_server=3.4,
                       accept_length_client=3.1, warnings=list(warnings))


# the run: peak 426.2 at c=64 where requests queue behind max_running_requests=17
RUN = [level(1, 120.0, 90.0), level(4, 290.0, 140.0), level(16, 402.1, 1_800.0), level(32, 415.0, 7_300.0),
       level(64, 426.2, 14_100.0)]
SERVER = LatencyLimit(max_running_requests=17, ttft_limit_s=2.0)


def test_the_summary_names_the_best_level_within_the_ttft_limit_and_what_the_peak_costs() -> None:
    assert pick(RUN, SERVER).summary() == ("Best within TTFT p99 ≤ 2 s: 402.1 tok/s at c=16; "
                                           "peak 426.2 at c=64 (queueing, TTFT p99 14.1 s)")
    assert pick(RUN, LatencyLimit(17, 20.0)).summary() == "Best within TTFT p99 ≤ 20 s: 426.2 tok/s at c=64 (also the peak)"
    assert pick(RUN, LatencyLimit(17, 0.05)).summary() == (
        "No level within TTFT p99 ≤ 0.05 s; peak 426.2 tok/s at c=64 (queueing, TTFT p99 14.1 s)")


def test_levels_without_a_ttft_p99_are_not_called_over_the_limit() -> None:
    unmeasured = [LevelResult(concurrency=1, output_tok_s=186.0), LevelResult(concurrency=32, output_tok_s=420.0)]
    choice = pick(unmeasured, SERVER)
    assert choice.summary() == "Peak 420.0 tok/s at c=32 (queueing); TTFT p99 not measured"
    assert choice.best_words() == "– (no TTFT p99)"


def test_only_levels_above_the_servers_max_running_requests_queue() -> None:
    assert [SERVER.note(lv.concurrency) for lv in RUN] == [None, None, None, "queues: >17 running", "queues: >17 running"]
    assert LatencyLimit(None).note(64) is None  # capacity unknown: nothing claimed


def test_the_limit_is_a_profile_key_validated_like_the_others() -> None:
    config = parse_config("[profiles.default]\nttft_limit_s = 1.5\n")
    assert config.profile().ttft_limit_s == 1.5
    assert parse_config("").profile().ttft_limit_s == 2.0
    try:
        parse_config("[profiles.default]\nttft_limit_s = 0\n")
    except Exception as err:  # noqa: BLE001 - the config's own error type, whatever it is
        assert "ttft_limit_s" in str(err) and "greater than 0" in str(err)
    else:
        raise AssertionError("ttft_limit_s = 0 was accepted")


class FrozenClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield BenchTable(id="bench", clock=FrozenClock(500.0))

    def on_mount(self) -> None:
        table = self.query_one(BenchTable)
        table.start_run([1, 4, 16, 32, 64], previous=[level(1, 100.0, 80.0), level(16, 380.0, 1_500.0)], limit=SERVER)
        for lv in RUN[:4]:
            table.apply_event(LevelDone(level(lv.concurrency, lv.output_tok_s, lv.ttft_ms.p99 or 0, warnings=(TEMP0,))))
        table.apply_event(LevelStarted(concurrency=64, planned=32))
        table.clock.now = 512.0  # type: ignore[attr-defined]
        table.apply_event(LevelProgress(concurrency=64, done=12, errors=0, tokens=3000, tok_s=431.5))


async def test_the_bench_table_marks_queueing_levels_shows_itl_and_summarises_within_the_limit() -> None:
    app = Host()
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.query_one(BenchTable)
        await pilot.pause()
        assert table.cell_text(16, "progress").endswith("100%")
        assert table.cell_text(32, "progress") == "queues: >17 running"
        assert table.cell_text(16, "itl_p50") == "12.5ms"
        table.apply_event(LevelDone(RUN[4]))
        table.apply_event(RunDone(levels=RUN))
        assert table.cell_text(64, "progress") == "queues: >17 running"
        assert ("Best within TTFT p99 ≤ 2 s: 402.1 tok/s at c=16; peak 426.2 at c=64 (queueing, TTFT p99 14.1 s)"
                in table.status)


async def test_at_80_columns_the_table_keeps_what_matters_and_drops_the_rest() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(BenchTable)
        await pilot.pause()
        shown = table.visible_columns
        assert shown[:6] == ("c", "tok_s", "delta", "progress", "ttft_p99", "itl_p50")
        widths = sum(col.get_render_width(table.table) for col in table.table.columns.values())
        assert widths <= 80  # nothing scrolls sideways: the progress column is whole
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert set(table.visible_columns) >= {"prev", "ttft_p50", "per_req", "tpot_p50", "accept"}


def test_bench_table_snapshot_at_80x24(snap_compare) -> None:
    assert snap_compare(Host(), terminal_size=(80, 24))


def test_bench_table_snapshot_at_160x48(snap_compare) -> None:
    assert snap_compare(Host(), terminal_size=(160, 48))


async def test_the_panels_live_benchmark_marks_levels_above_the_demo_servers_capacity(tmp_path) -> None:
    """Through the app: the trial's facts (max_running_requests from /server_info) reach the table, and a
    stored trial picked again shows the same marks."""
    from specdec_tui.core.config import Config
    from specdec_tui.core.session import Session
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace
    from specdec_tui.loop.states import Busy
    from specdec_tui.ui.app import make_app

    from .ui_helpers import record_notifications, wait_for

    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200.0)
    base = demo_config(ws)
    profile = BenchProfile(concurrency=(1, 64), requests=4, warmup=0, max_tokens=16)
    app = make_app(Config(hosts=base.hosts, profiles={"default": profile}, default_host=base.default_host),
                   LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo"),
                   Session(host="demo", unit=ws.unit_name, profile=profile), session_path=tmp_path / "s.toml")
    async with app.run_test(size=(160, 48)) as pilot:
        seen = record_notifications(app)
        await wait_for(pilot, lambda: app.trial_loop is not None and app.trial_loop.busy is Busy.IDLE and app.health is not None
                       and app.health.state == "ready", "the demo start", steps=1200)
        await pilot.press("b")
        await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark", steps=1200)
        mrr = app.session.trials[-1].facts.max_running_requests
        table = app.screen.query_one("#bench-table", BenchTable)
        assert mrr is not None and mrr < 64
        assert table.cell_text(64, "progress") == f"queues: >{mrr} running"
        assert table.cell_text(1, "progress").endswith("100%")
        assert "Best within TTFT p99 ≤ 2 s" in table.status or "No level within TTFT p99 ≤ 2 s" in table.status
