"""The main screen in each state an operator meets (issue 6), at 80×24 and 160×48, in a dark and a light theme.

Each state is built on an offline app with fixed data through the app's own messages (health, journal
batches, log stats) and the widgets' public APIs: no clocks, ports that vary, PIDs or paths on screen.
    loading   health LOADING, the journal's startup lines               (Journal tab)
    ready     health READY: max_running_requests 17, steps 3            (Health tab)
    bench     a finished benchmark against the previous trial, caveats, the chart of three trials (Bench tab)
    failed    health FAILING with SGLang's "Not enough memory", the rollback marker (Journal tab)
    invalid   the Config tab with a flag SGLang refuses                 (Config tab)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from specdec_tui.core.latency import trial_limit
from specdec_tui.core.results import Dist, LevelResult, ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.core.sglang.journal_text import format_record
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import JournalRecord, ServiceStatus
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.loop.journal_feed import fold, snapshot
from specdec_tui.ui import messages as m
from specdec_tui.ui.app import SpecdecApp

from .ui_helpers import OFFLINE_UNIT, offline_app, started

UNIT = "sglang-demo.service"
T0 = datetime(2026, 3, 1, 9, 0, 0)
STARTUP = (
    "[2026-03-01 09:00:00] Using default HuggingFace chat template with detected content format: string",
    "[2026-03-01 09:00:02 TP0] Init torch distributed begin.",
    "[2026-03-01 09:00:04 TP0] Load weight begin. avail mem=78.52 GB",
    "[2026-03-01 09:00:31 TP0] Load weight end. type=Qwen3_5MoeForCausalLM, dtype=torch.bfloat16, avail mem=17.21 GB, mem usage=61.31 GB.",
    "[2026-03-01 09:00:31 TP0] Using KV cache dtype: torch.bfloat16",
)
READY_LINES = (
    "[2026-03-01 09:00:33 TP0] KV Cache is allocated. #tokens: 849159, K size: 2.10 GB, V size: 2.10 GB",
    "[2026-03-01 09:00:33 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=14.18 GB",
    "[2026-03-01 09:00:41 TP0] Capture cuda graph end. Time elapsed: 8.30 s. mem usage=4.20 GB. avail mem=9.98 GB.",
    "[2026-03-01 09:00:41 TP0] max_total_num_tokens=849159, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=17, context_len=262144, available_gpu_mem=9.98 GB",
    "[2026-03-01 09:00:42] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-03-01 09:00:43] The server is fired up and ready to roll!",
    "[2026-03-01 09:01:10 TP0] Decode batch, #running-req: 16, #token: 41210, token usage: 0.05, accept len: 3.41, "
    "accept rate: 0.85, cuda graph: True, gen throughput (token/s): 1874.22, #queue-req: 0, ",
)
FAILED_LINES = (
    "[2026-03-01 09:00:31 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/pool_configurator.py", line 84, in __post_init__',
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.95",
    "[2026-03-01 09:00:32] Received sigquit from a child process. It usually means the child failed.",
    f"{UNIT}: Main process exited, code=exited, status=1/FAILURE",
    f"{UNIT}: Failed with result 'exit-code'.",
)
SEED_C1 = (123.0, 186.0, 234.0)  # the seed's single-request decode, steps 1 → 2 → 3
SEED_MRR = (26, 21, 17)


def records(lines: tuple[str, ...], second: int = 0) -> list[JournalRecord]:
    return [JournalRecord(cursor=str(second + i), timestamp=T0.replace(second=(second + i) % 60), message=line)
            for i, line in enumerate(lines)]


def facts(steps: int, mrr: int) -> ServerFacts:
    return ServerFacts(model="qwen", max_running_requests=mrr, max_total_num_tokens=849159, context_len=262144,
                       speculative={"algorithm": "NEXTN", "num_steps": steps, "eagle_topk": 1, "num_draft_tokens": steps + 1},
                       version="0.5.9")


def levels(c1: float, mrr: int) -> list[LevelResult]:
    """Five levels shaped like the seed's: more steps win at c=1 and lose at the top (fewer KV slots)."""
    out = []
    for c in (1, 4, 16, 32, 64):
        per_req = c1 / (1 + 0.04 * (c - 1))
        out.append(LevelResult(concurrency=c, requests=32, output_tokens=32 * 256, duration_s=20.0,
                               output_tok_s=round(per_req * min(c, mrr), 1), per_request_tok_s=Dist(p50=per_req),
                               ttft_ms=Dist(p50=40.0 + 6 * c, p99=90.0 + 12 * c), tpot_ms=Dist(p50=1000 / per_req),
                               achieved_concurrency=float(min(c, mrr)), accept_length_server=3.4, accept_length_client=3.3,
                               finish_reasons={"length": 32}))
    out[-1].warnings.append("temperature 0 + ignore_eos: acceptance is inflated against real traffic")
    out[-1].errors, out[-1].error_kinds = 1, {"stall": 1}
    return out


def seed_trials() -> list[Trial]:
    trials = []
    for i, (steps, c1, mrr) in enumerate(zip((1, 2, 3), SEED_C1, SEED_MRR, strict=True), start=1):
        unit = UnitFile.parse(OFFLINE_UNIT).set_flags({"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)})
        trials.append(Trial(id=i, unit_text=unit.text, flags=unit.flags(), started_at=T0, status="ok", label=f"steps={steps}",
                            facts=facts(steps, mrr), levels=levels(c1, mrr)))
    return trials


def health(state: HealthState, *, active: str, sub: str, http_ok: bool, detail: str = "", result: str = "success",
           facts_: ServerFacts | None = None) -> HealthSnapshot:
    status = ServiceStatus(unit=UNIT, active_state=active, sub_state=sub, result=result)
    return HealthSnapshot(state=state, status=status, http_ok=http_ok, model="qwen" if http_ok else "", facts=facts_, detail=detail)


def feed_journal(app: SpecdecApp, recs: list[JournalRecord]) -> LogStats:
    """Post the journal as the tail worker does: the records, their parsed kinds, the folded stats."""
    stats = LogStats()
    kinds, lines = fold(recs, stats, format_record)
    app.post_message(m.JournalBatch(recs, kinds, lines))
    app.post_message(m.LogStatsChanged(snapshot(stats)))
    return stats


async def show(pilot: Pilot, tab: str) -> None:
    """Settle: the tab shown, the journal flushed, coalesced redraws done."""
    app = pilot.app
    await started(pilot)
    app.main.action_show_tab(tab)
    await pilot.pause(0.3)  # past the journal flush and the health pane's stats coalescing
    journal = app.main.query_one("#journal-pane")
    journal.flush()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    assert app.main.query_one(TabbedContent).active == tab


async def loading(pilot: Pilot) -> None:
    app = pilot.app
    feed_journal(app, records(STARTUP))
    app.post_message(m.HealthChanged(health(HealthState.LOADING, active="active", sub="running", http_ok=False,
                                            detail="process up, port not open yet (loading weights)")))
    await show(pilot, "journal")


async def ready(pilot: Pilot) -> None:
    app = pilot.app
    feed_journal(app, records(STARTUP + READY_LINES))
    app.post_message(m.HealthChanged(health(HealthState.READY, active="active", sub="running", http_ok=True, facts_=facts(3, 17))))
    await show(pilot, "health")


async def bench_done(pilot: Pilot) -> None:
    app = pilot.app
    feed_journal(app, records(STARTUP + READY_LINES))
    app.post_message(m.HealthChanged(health(HealthState.READY, active="active", sub="running", http_ok=True, facts_=facts(3, 17))))
    trials = app.session.trials
    await pilot.pause()
    app.main.query_one("#bench-table").show_results(trials[-1].levels, trials[-2].levels, limit=trial_limit(trials[-1]))
    await show(pilot, "bench")


async def failed_start(pilot: Pilot) -> None:
    app = pilot.app
    feed_journal(app, records(STARTUP + FAILED_LINES))
    app.post_message(m.HealthChanged(health(HealthState.FAILING, active="failed", sub="failed", http_ok=False, result="exit-code",
                                            detail="unit failed (exit-code, exit status 1)")))
    await pilot.pause()
    journal = app.main.query_one("#journal-pane")
    journal.add_marker("healthy failed", T0.replace(second=40))
    journal.add_marker("rolled back to the previous unit", T0.replace(second=41))
    await show(pilot, "journal")


async def invalid_config(pilot: Pilot) -> None:
    app = pilot.app
    await pilot.pause()
    await app.config_pane.set_flag("speculative-num-steps", "three")  # 0.5.23's parser refuses it
    await show(pilot, "config")


STATES: dict[str, tuple[Callable[[Pilot], Awaitable[None]], bool]] = {  # name → (builder, with the seed's trials)
    "loading": (loading, False),
    "ready": (ready, False),
    "bench": (bench_done, True),
    "failed": (failed_start, False),
    "invalid": (invalid_config, False),
}


@pytest.mark.parametrize("theme", ["specdec-dark", "textual-light"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("state", list(STATES))
def test_main_screen_state(snap_compare, state: str, size: tuple[int, int], theme: str) -> None:
    build, with_trials = STATES[state]
    app = offline_app(theme=theme, trials=seed_trials() if with_trials else None)

    async def run_before(pilot: Pilot) -> None:
        await started(pilot)  # the form and every tab, not the first frame's unit preview
        await build(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
