"""The simulator's log lines read as current upstream SGLang's do, through the same parser the panel uses.

Qwen3.5 (the sim's model) is a hybrid: upstream logs its full-attention KV pool and its mamba state pool
separately, and says which bound cut max_running_requests. These tests run the sim's own start-up and line
builders and read the result back with `parse_line`/`LogStats`, as the health pane does.
"""

from __future__ import annotations

import asyncio
import io

import pytest

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ConcurrencyLimitRecord, DecodeRecord, PrefillRecord
from specdec_tui.core.sglang.stats import LogStats, spec_accept_rate
from specdec_tui.sim.args import parse_sim_args
from specdec_tui.sim.logs import SimLog, decode_batch_line, mamba_pool, prefill_batch_line
from specdec_tui.sim.startup import run_startup
from tests.test_sim_support import seed_flags


def startup_lines(*flags: str) -> list[str]:
    args = parse_sim_args([*flags, "--load-seconds", "0"])
    out = io.StringIO()
    asyncio.run(run_startup(args, SimLog(tp_size=4, out=out)))
    return out.getvalue().splitlines()


# upstream: python/sglang/srt/mem_cache/concurrency_limit.py (`state_pool_limit`, `format_concurrency_report`)
@pytest.mark.parametrize(("steps", "resolved"), [(1, 26), (2, 21), (3, 17)])
def test_seed_startup_says_the_mamba_state_pool_cut_the_requested_48(steps: int, resolved: int) -> None:
    lines = startup_lines(*seed_flags(steps))
    cut = [line for line in lines if "max_running_requests reduced from" in line]
    assert len(cut) == 1
    slots = steps + 2  # one state slot plus one per draft token (steps + 1)
    head = (
        f"max_running_requests reduced from the requested 48 to {resolved} (per dp worker), bound by mamba_state_pool "
        f"(max_mamba_cache_size={resolved * slots} per shard / {slots} slots per request); other limits: "
        "max_running_requests=48, kv_capacity="
    )
    tail = (
        f". To raise it: try one of: --max-mamba-cache-size {48 * slots} (memory permitting), a larger "
        "--mamba-full-memory-ratio, or --mamba-ssm-dtype bfloat16."
    )
    assert head in cut[0] and cut[0].endswith(tail)
    record = parse_line(cut[0])
    assert isinstance(record, ConcurrencyLimitRecord)
    assert (record.value, record.requested, record.bound) == (resolved, 48, "mamba_state_pool")
    assert record.other_limits["max_running_requests"] == 48 and record.other_limits["kv_capacity"] > 10_000
    stats = LogStats().feed(lines)
    assert stats.max_running_requests == resolved  # the startup summary agrees with the concurrency line
    assert stats.max_running_bound(resolved) == "mamba state"


def test_a_request_that_fits_is_not_reported_as_cut() -> None:
    lines = startup_lines(*seed_flags(1), "--max-running-requests", "8")
    assert not [line for line in lines if line.split("] ", 1)[-1].startswith("max_running_requests")]
    stats = LogStats().feed(lines)
    assert stats.max_running_requests == 8 and stats.max_running_bound(8) == ""


def test_without_a_request_the_plain_form_names_the_bound() -> None:
    # no speculative decoding: nothing resets --max-running-requests, so the state pool alone sets it
    lines = startup_lines("--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--mem-fraction-static", "0.85")
    plain = [line for line in lines if " max_running_requests=" in line and "bound by" in line]
    assert len(plain) == 1 and "other limits: heuristic_estimate=4096, kv_capacity=" in plain[0]
    record = parse_line(plain[0])
    assert isinstance(record, ConcurrencyLimitRecord) and record.requested is None and not record.reduced
    assert record.bound == "mamba_state_pool" and record.remedy.startswith("try one of: --max-running-requests to state")
    stats = LogStats().feed(lines)
    assert stats.max_running_bound(stats.max_running_requests) == "mamba state" and stats.adjustments == []


# upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py and pool_stats_observer.py
def test_decode_line_logs_both_pools_and_token_usage_is_the_fuller_one() -> None:
    pool = mamba_pool(max_running_requests=26, num_draft_tokens=2)
    line = decode_batch_line(running=20, used_tokens=30_000, token_usage=0.10, accept_len=1.9, accept_rate=0.9,
                             cuda_graph=True, gen_throughput=2100.5, queue=3, mamba=pool)
    assert line == (
        "Decode batch, #running-req: 20, #cached-token: 0, #full token: 30000, full token usage: 0.10, "
        "mamba num: 60, mamba usage: 0.77, accept len: 1.90, accept rate: 0.90, cuda graph: True, "
        "gen throughput (token/s): 2100.50, #queue-req: 3"
    )
    record = parse_line("[2026-12-03 08:00:00 TP0] " + line)
    assert isinstance(record, DecodeRecord)
    assert record.token_usage == 0.77  # the mamba pool is the full one, as upstream's token_usage gauge says
    assert record.tokens == 30000 and record.extra["mamba_num"] == 60 and type(record.extra["mamba_num"]) is int


def test_prefill_line_logs_full_and_mamba_usage() -> None:
    line = prefill_batch_line(new_seq=2, new_token=900, cached_token=0, token_usage=0.01, running=13, queue=0,
                              input_throughput=4000.0, mamba=mamba_pool(26, 2))
    assert line.startswith("Prefill batch, #new-seq: 2, #new-token: 900, #cached-token: 0, full token usage: 0.01, "
                           "mamba usage: 0.50, #running-req: 13, ")
    record = parse_line(line)
    assert isinstance(record, PrefillRecord) and record.token_usage == 0.50


def test_accept_rate_is_correct_drafts_over_drafts_proposed() -> None:
    # steps 3 (4 draft tokens): accept len 3.71 means 2.71 of the 3 drafts were right
    assert spec_accept_rate(3.71, 4) == pytest.approx(2.71 / 3)
    assert spec_accept_rate(1.0, 2) == 0.0 and spec_accept_rate(2.0, 2) == 1.0
    assert spec_accept_rate(1.5, 1) == 0.0  # no drafts, no rate
