"""The simulator's log lines read as current upstream SGLang's do, through the same parser the panel uses.

Qwen3.5 (the sim's model) is a hybrid: upstream logs its full-attention KV pool and its mamba state pool
separately. The formats are 0.5.23's (each test cites where upstream writes the line). These tests run the sim's own start-up and line
builders and read the result back with `parse_line`/`LogStats`, as the health pane does.
"""

from __future__ import annotations

import asyncio
import io

import pytest

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import (
    CudaGraphRecord,
    DecodeRecord,
    KVCacheRecord,
    LoadWeightRecord,
    PrefillRecord,
    ServerArgsRecord,
)
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


# SGLang 0.5.23 has no concurrency report (no mem_cache/concurrency_limit.py, no "bound by" line): the tests that
# read one from the simulator were dropped with it. What 0.5.23 says is the reset warning and the start's summary.
# upstream: arg_groups/speculative_hook.py `_handle_eagle_family`; managers/scheduler.py (`max_total_num_tokens=…`)
@pytest.mark.parametrize(("steps", "resolved"), [(1, 26), (2, 21), (3, 17)])
def test_seed_startup_says_the_reset_and_the_resolved_max_running_requests(steps: int, resolved: int) -> None:
    lines = startup_lines(*seed_flags(steps))
    assert not [line for line in lines if "bound by" in line or "reduced from the requested" in line]
    stats = LogStats().feed(lines)
    assert stats.max_running_requests == resolved and stats.max_running_bound(resolved) == ""
    assert [(a.setting, a.value) for a in stats.adjustments] == [("max_running_requests", 48)]
    assert stats.num_draft_tokens == steps + 1  # learned from the dict form of server_args


def test_startup_prints_0_5_23s_lines_and_none_of_the_older_ones() -> None:
    raw = startup_lines(*seed_flags(3))
    lines = [line.split("] ", 1)[-1] for line in raw]
    assert lines[1].startswith("server_args={'model_path': 'Qwen/Qwen3.5-122B-A10B', ")
    records = [parse_line(line) for line in raw]
    args = records[1]
    assert isinstance(args, ServerArgsRecord) and args.args["speculative_num_steps"] == 3
    assert "Init parallel begin." in lines and not [line for line in lines if "torch distributed" in line]
    assert not [line for line in lines if line.startswith(("Capture cuda graph", "KV Cache is allocated. #tokens"))]
    kv = [r for r in records if isinstance(r, KVCacheRecord) and r.pool == "KV"]
    assert len(kv) == 4 and kv[0].extra == {"dtype": "torch.bfloat16"} and kv[0].tokens  # every TP rank says it
    assert sorted(r.tags["TP"] for r in kv) == [0, 1, 2, 3]
    graphs = [(r.graph, r.phase) for r in records if isinstance(r, CudaGraphRecord) and r.tags.get("TP") == 0]
    assert graphs == [(g, phase) for g in ("target verify CUDA graph", "draft decode CUDA graph",
                                            "draft extend CUDA graph") for phase in ("begin", "end")]
    verify_begin = next(line for line in lines if line.startswith("Capture target verify CUDA graph begin."))
    assert "backend=full, num_tokens_per_req=4, avail mem=" in verify_begin
    weights = [r for r in records if isinstance(r, LoadWeightRecord) and r.phase == "end"]
    assert weights and all(r.elapsed_s is not None and r.dtype is None for r in weights)


# upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py and pool_stats_observer.py
def test_decode_line_logs_both_pools_and_token_usage_is_the_fuller_one() -> None:
    pool = mamba_pool(max_running_requests=26, num_draft_tokens=2)
    line = decode_batch_line(running=20, used_tokens=30_000, token_usage=0.10, accept_len=1.9, accept_rate=0.9,
                             cuda_graph=True, gen_throughput=2100.5, queue=3, mamba=pool)
    assert line == (
        "Decode batch, #running-req: 20, #full token: 30000, full token usage: 0.10, "
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
