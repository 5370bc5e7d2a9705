"""HealthPane, TokChart and TrialsList in tiny host apps, fed the real records they will get."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.app import App, ComposeResult
from textual.color import Color

from specdec_tui.core.compare import change_label
from specdec_tui.core.results import LevelResult, ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import GpuFact, ServiceStatus
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.ui.widgets.health_pane import HealthPane
from specdec_tui.ui.widgets.tok_chart import TokChart
from specdec_tui.ui.widgets.trials_list import TrialsList

from .ui_helpers import restyled_ids

DECODE = (
    "[2025-03-01 14:03:07 TP0] Decode batch, #running-req: 3, #token: 912, token usage: 0.12, "
    "accept len: 3.41, accept rate: 0.85, cuda graph: True, gen throughput (token/s): 233.96, #queue-req: 2, "
)
OOM = "[2025-03-01 14:03:08 TP0] Scheduler hit an exception: RuntimeError: CUDA error: out of memory"


class Host(App):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget
        self.selected: list[tuple[int, int]] = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_trials_list_selected(self, message: TrialsList.Selected) -> None:
        self.selected.append((message.trial_index, message.trial_id))


def levels(*pairs: tuple[int, float]) -> list[LevelResult]:
    return [LevelResult(concurrency=c, output_tok_s=t) for c, t in pairs]


async def test_health_pane_shows_state_facts_live_numbers_error_and_gpus() -> None:
    app = Host(HealthPane())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        assert pane.section_text("facts").count("–") >= 4  # nothing known yet, said as such

        facts = ServerFacts(
            model="Qwen3.5-122B-A10B",
            max_running_requests=17,
            max_total_num_tokens=180_000,
            context_len=262_144,
            speculative={"algorithm": "EAGLE", "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
        )
        status = ServiceStatus(unit="sglang.service", active_state="active", sub_state="running", main_pid=4242)
        pane.update_health(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, facts=facts))
        pane.update_log_stats(LogStats().feed([DECODE, OOM]))
        pane.update_gpus([GpuFact(0, "RTX PRO 6000", 81_920, 97_887, 93.0)])
        await pilot.pause(0.3)  # live numbers are redrawn on a ~5/s timer

        badge = pane.query_one("#health-badge")
        assert pane.state == "ready" and badge.has_class("-ready")
        assert "READY" in pane.section_text("badge")
        assert "PID 4242" in pane.section_text("service") and "http ok" in pane.section_text("service")
        facts_text = pane.section_text("facts")
        assert "17" in facts_text and "180,000" in facts_text and "262,144" in facts_text
        assert "EAGLE steps=3 topk=1 draft=4" in facts_text
        live = pane.section_text("live")
        assert "3.41" in live and "234.0 tok/s" in live and "12%" in live
        assert live.startswith("Live (journal, as of 14:03:07)")  # an idle server logs nothing: they say their time
        assert "out of memory" in pane.section_text("error")
        assert "GPU0" in pane.section_text("gpus") and "93%" in pane.section_text("gpus")

        pane.update_health(HealthSnapshot(state=HealthState.FAILING, status=None, http_ok=False, detail="exit 1"))
        pane.update_gpus([])
        await pilot.pause()
        assert badge.has_class("-failing") and not badge.has_class("-ready")
        assert "FAILING — exit 1" in pane.section_text("badge")
        assert not pane.query_one("#health-gpus").display


# SGLang 0.5.23 with attention data-parallelism: each DP rank's scheduler logs its own decode line
# (managers/scheduler_components/metrics_reporter.py report_decode_stats, on attn_tp_rank 0 of every DP rank)
DP_DECODES = [
    "[2026-12-04 10:10:00 DP0 TP0 EP0] Decode batch, #running-req: 40, #token: 28000, token usage: 0.31, "
    "accept len: 3.00, accept rate: 0.67, cuda graph: True, gen throughput (token/s): 1000.00, #queue-req: 0",
    "[2026-12-04 10:10:01 DP1 TP4 EP4] Decode batch, #running-req: 4, #token: 2800, token usage: 0.05, "
    "accept len: 2.00, accept rate: 0.33, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0",
]


async def test_health_pane_sums_the_dp_ranks_throughput_and_shows_each() -> None:
    app = Host(HealthPane())
    async with app.run_test(size=(100, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed(DP_DECODES))
        await pilot.pause(0.3)
        live = pane.section_text("live")
        assert "1,100 tok/s (DP0 1,000 + DP1 100.0)" in live  # not DP1's 100 alone
        assert "44 (DP0 40 + DP1 4)" in live and "31% (DP0 31%, DP1 5%)" in live


# upstream: python/sglang/srt/mem_cache/concurrency_limit.py `format_concurrency_report` (the reduced form)
CUT = (
    "[2026-11-20 09:01:10 TP0] max_running_requests reduced from the requested 48 to 26 (per dp worker), bound by "
    "mamba_state_pool (max_mamba_cache_size=78 per shard / 3 slots per request); other limits: "
    "max_running_requests=48, kv_capacity=219484. To raise it: try one of: --max-mamba-cache-size 144 (memory "
    "permitting), a larger --mamba-full-memory-ratio, or --mamba-ssm-dtype bfloat16."
)


async def test_health_pane_says_what_bound_max_running_requests() -> None:
    app = Host(HealthPane())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed([CUT]))
        await pilot.pause(0.3)
        assert "max_running_requests  26, bound by mamba state" in pane.section_text("facts")

        # the server's own number wins; the bound is shown only when the journal resolved to that number
        facts = ServerFacts(model="Qwen3.5-122B-A10B", max_running_requests=26)
        pane.update_health(HealthSnapshot(state=HealthState.READY, status=None, http_ok=True, facts=facts))
        await pilot.pause()
        assert "26, bound by mamba state" in pane.section_text("facts")
        other = ServerFacts(model="Qwen3.5-122B-A10B", max_running_requests=21)
        pane.update_health(HealthSnapshot(state=HealthState.READY, status=None, http_ok=True, facts=other))
        await pilot.pause()
        assert "max_running_requests  21\n" in pane.section_text("facts") + "\n"
        assert "bound by" not in pane.section_text("facts")


async def test_chart_plots_one_line_per_trial_on_log2_axis() -> None:
    app = Host(TokChart())
    async with app.run_test(size=(100, 30)) as pilot:
        chart = app.query_one(TokChart)
        chart.set_trials(
            [
                ("steps=1", levels((1, 123.0), (4, 400.0), (64, 1500.0))),
                ("steps=3", levels((64, 1400.0), (1, 234.0), (4, 610.0))),
                ("failed", []),
            ]
        )
        await pilot.pause()
        assert [label for label, _ in chart.series] == ["steps=1", "steps=3"]
        assert chart.series[1][1] == [(1, 234.0), (4, 610.0), (64, 1400.0)]
        screen = app.export_screenshot()
        assert "steps=3" in screen and "64" in screen


def trial(i: int, steps: str, c1: float, cmax: float, mrr: int, status: str = "ok") -> Trial:
    return Trial(
        id=i,
        unit_text="",
        flags={"speculative-num-steps": steps, "speculative-eagle-topk": "1"},
        pushed_at=datetime(2025, 3, 1, 14, i, 0, tzinfo=UTC),
        status=status,
        failure="not healthy in 900 s" if status == "failed" else "",
        facts=ServerFacts(max_running_requests=mrr) if status == "ok" else None,
        levels=levels((1, c1), (64, cmax)) if status == "ok" else [],
    )


async def test_trials_list_rows_and_selection_message() -> None:
    app = Host(TrialsList())
    async with app.run_test(size=(100, 24)) as pilot:
        widget = app.query_one(TrialsList)
        widget.set_trials([trial(1, "1", 123, 1500, 26), trial(2, "2", 186, 1480, 21), trial(3, "4", 0, 0, 0, "failed")])
        await pilot.pause()
        assert widget.cell_text(1, "change") == "trial 1"  # unlabelled (an old session): its number
        assert widget.cell_text(2, "change") == "steps=2"  # else what it changed, as the loop labels trials
        assert widget.cell_text(2, "c1") == "186.0" and widget.cell_text(2, "cmax") == "1,480 @64"
        assert widget.cell_text(2, "mrr") == "21"
        assert widget.cell_text(3, "status").startswith("failed: not healthy")
        widget.table.focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.selected == [(1, 2)]


def test_change_label_names_changed_added_and_removed_flags() -> None:
    steps = "speculative-num-steps"
    assert change_label({steps: "1", "b": None}, {steps: "2", "c": None}) == "steps=2 b=off c=on"
    assert change_label({"a": "1"}, {"a": "1"}) == "same flags"


async def test_a_health_change_restyles_the_badge_alone() -> None:
    """Issue 34: the state's class was set on the pane, so each change re-applied the CSS of the pane and every
    section in it, twice (one class off, one on), in each of the panel's three panes: every restart of a sweep held
    the panel's loop ~40 ms while keys waited."""
    app = Host(HealthPane())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_health(HealthSnapshot(state=HealthState.STARTING, status=None, http_ok=False))
        await pilot.pause()
        with restyled_ids(app) as restyled:
            pane.update_health(HealthSnapshot(state=HealthState.READY, status=None, http_ok=True))
        await pilot.pause()
        badge = pane.query_one("#health-badge")
        assert restyled == ["health-badge"]
        assert badge.styles.background == Color.parse(app.get_css_variables()["success"])


async def test_health_pane_says_warming_up_in_the_warning_colour_not_failing() -> None:
    app = Host(HealthPane())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_health(HealthSnapshot(state=HealthState.WARMING_UP, status=None, http_ok=False,
                                          detail="port open, /health 503 until the warmup request finishes"))
        await pilot.pause()
        badge = pane.query_one("#health-badge")
        assert badge.has_class("-warming-up") and not badge.has_class("-failing")
        assert badge.styles.background == Color.parse(app.get_css_variables()["warning"])
        assert pane.section_text("badge").startswith("◕ WARMING UP — port open, /health 503")


async def test_the_last_error_shows_the_servers_words_as_written() -> None:
    """An error's text is no markup ("[/]" in one stopped the panel, "[b]" turned bold and vanished) and keeps no
    escape code."""
    error = ("[2026-11-20 09:01:12 TP0] Scheduler hit an exception: ValueError: bad shape [b]x[/] "
             "\x1b[31mfrom rank 3\x1b[0m")
    app = Host(HealthPane())
    async with app.run_test(size=(120, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed([error]))
        await pilot.pause(0.3)  # live numbers are redrawn on a ~5/s timer
        shown = pane.section_text("error")
        assert "ValueError: bad shape [b]x[/] from rank 3" in shown
        assert "\x1b" not in shown


async def test_a_fresh_start_shows_neither_the_old_phase_nor_the_old_error() -> None:
    """Issue 35 (10): during a restart Health read "LOADING … · ready" (the stopped server's phase) and kept the
    stopped server's red "Last error" on the freshly started one."""
    ready = "[2025-03-01 14:00:00] The server is fired up and ready to roll!"
    begin = "[2025-03-01 14:05:00 TP0] Load weight begin. avail mem=93.10 GB"
    app = Host(HealthPane())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed([ready, OOM]))
        await pilot.pause(0.3)
        assert "out of memory" in pane.section_text("error")
        pane.update_health(HealthSnapshot(state=HealthState.LOADING, status=None, http_ok=False))
        pane.start_wait(60.0)
        await pilot.pause(0.3)
        assert pane.wait_text.endswith("· waiting for the journal"), pane.wait_text
        pane.update_log_stats(LogStats().feed([ready, OOM, begin]))
        await pilot.pause(0.3)
        assert pane.wait_text.endswith("· loading weights"), pane.wait_text
        assert "out of memory" not in pane.section_text("error")
