"""Progress where work is long: the healthy wait (elapsed / timeout and the journal's last start-up step), a
benchmark level (requests done / planned and the time left), a sweep or replay step (k of N and the time left),
in the words `core.progress` gives every display."""

from __future__ import annotations

import re
import time

from textual.app import App, ComposeResult

from specdec_tui.core.progress import duration_words, eta_words, time_left
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.ui.widgets.health_pane import HealthPane

# upstream: python/sglang/srt/model_executor/model_runner.py (load weight), mem_cache pools, cuda_graph_runner.py,
# entrypoints/http_server.py (the ready line) — the start-up lines in the order a server prints them.
STARTUP = [
    "[2026-12-03 08:44:40 TP0] Load weight begin. avail mem=78.53 GB",
    "[2026-12-03 08:44:41 TP0] Load weight end. type=Qwen3_5MoeForConditionalGenerationMTP, dtype=torch.bfloat16, "
    "avail mem=19.31 GB, mem usage=59.22 GB.",
    "[2026-12-03 08:44:42 TP0] KV Cache is allocated. #tokens: 905621, K size: 5.61 GB, V size: 5.61 GB",
    "[2026-12-03 08:44:42 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=14.18 GB",
    "[2026-12-03 08:44:44 TP0] Capture cuda graph end. Time elapsed: 1.20 s. mem usage=1.80 GB. avail mem=12.38 GB.",
    "[2026-12-03 08:44:44] The server is fired up and ready to roll!",
]


def test_the_start_up_step_follows_the_journal() -> None:
    stats = LogStats()
    phases = []
    for line in STARTUP:
        stats.feed([line])
        phases.append(stats.phase)
    assert phases == ["loading weights", "weights loaded", "allocating the KV cache", "capturing CUDA graphs",
                      "CUDA graphs captured", "ready"]


def test_the_words_of_time() -> None:
    assert [duration_words(s) for s in (0.4, 12, 65, 3725)] == ["0 s", "12 s", "1 min 05 s", "1 h 02 min"]
    assert time_left(0, 6, 30.0) is None and time_left(2, 6, 30.0) == 60.0
    assert eta_words(0, 6, 30.0) == "estimating the time left…"
    assert eta_words(2, 6, 30.0) == "about 1 min 00 s left" and eta_words(6, 6, 90.0) == ""


class PaneHost(App[None]):
    def compose(self) -> ComposeResult:
        yield HealthPane(id="pane")


async def test_the_health_pane_shows_the_wait_with_elapsed_timeout_and_phase() -> None:
    app = PaneHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        assert not pane.wait_text
        pane.update_log_stats(LogStats().feed(STARTUP[:4]))
        pane.start_wait(900.0, began=time.monotonic() - 75.2)
        await pilot.pause(0.3)
        text = pane.wait_text
        assert re.match(r"Waiting for ready: 1 min 1[5-9] s of 15 min 00 s ", text), text  # 75 s and the pauses
        assert text.endswith("· capturing CUDA graphs")
        pane.update_log_stats(LogStats().feed(STARTUP))
        await pilot.pause(0.3)  # the journal's numbers redraw at most ~5 times a second
        assert pane.wait_text.endswith("· ready")
        pane.end_wait()
        await pilot.pause()
        assert not pane.wait_text and not pane.query_one("#health-wait").display


async def test_a_restart_shows_the_wait_until_healthy_then_hides_it(tmp_path) -> None:

    from .ui_helpers import demo_app, demo_idle, wait_for

    app = demo_app(tmp_path, time_scale=4.0)  # slow enough that the wait is on screen for a while
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_idle(pilot, steps=2400)
        pane = app.main.query_one("#health-pane", HealthPane)
        await pilot.press("r")
        await wait_for(pilot, lambda: pane.wait_text.startswith("Waiting for ready: "), "the wait line", steps=1200)
        assert " of 2 min 00 s " in pane.wait_text  # the demo host's healthy_timeout_s
        await wait_for(pilot, lambda: app.health is not None and app.health.state == "ready" and not pane.wait_text,
                       "ready, and the wait line gone", steps=2400)


class FrozenClock:
    """A clock that says what the test sets: snapshots of times-left must not depend on how fast the machine is."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class WaitHost(App[None]):
    def compose(self) -> ComposeResult:
        yield HealthPane(id="pane", clock=FrozenClock(1000.0))

    def on_mount(self) -> None:
        pane = self.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed(STARTUP[:4]))
        pane.start_wait(900.0, began=925.0)  # 75 s into a 15 min wait, capturing CUDA graphs


class LevelHost(App[None]):
    def compose(self) -> ComposeResult:
        from specdec_tui.ui.widgets.bench_table import BenchTable

        yield BenchTable(id="bench", clock=FrozenClock(500.0))

    def on_mount(self) -> None:
        from specdec_tui.bench.events import LevelProgress, LevelStarted
        from specdec_tui.ui.widgets.bench_table import BenchTable

        table = self.query_one(BenchTable)
        table.start_run([1, 4, 16])
        table.apply_event(LevelStarted(concurrency=1, planned=32))
        table.clock.now = 512.0  # type: ignore[attr-defined]
        table.apply_event(LevelProgress(concurrency=1, done=12, errors=0, tokens=3000, tok_s=231.5))


def test_wait_snapshot_at_80x24(snap_compare) -> None:
    assert snap_compare(WaitHost(), terminal_size=(80, 24))


def test_level_progress_snapshot_at_80x24(snap_compare) -> None:
    assert snap_compare(LevelHost(), terminal_size=(80, 24))


async def test_level_progress_says_done_of_planned_and_the_time_left() -> None:
    from specdec_tui.ui.widgets.bench_table import BenchTable

    app = LevelHost()
    async with app.run_test(size=(80, 24)):
        table = app.query_one(BenchTable)
        assert table.cell_text(1, "progress").endswith(" 12/32")
        assert table.status == "Level c=1: 12/32 requests, about 20 s left"  # 12 s for 12, 20 more for 20
