"""The SGLang log parser on real-format lines from several SGLang eras (tests/data/logs/)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import (
    AccessRecord,
    AdjustRecord,
    ConcurrencyLimitRecord,
    CudaGraphRecord,
    DecodeRecord,
    DeprecationRecord,
    ErrorRecord,
    KVCacheRecord,
    LoadWeightRecord,
    PrefillRecord,
    ReadyRecord,
    StartupSummaryRecord,
    TextRecord,
)
from specdec_tui.core.sglang.stats import LogStats

LOGS = Path(__file__).parent / "data" / "logs"


def records(name: str) -> list:
    return [parse_line(line) for line in (LOGS / name).read_text().splitlines()]


def test_2024_period_format_decode_and_prefill() -> None:
    prefill, decode, decode_tp1 = records("era_2024_period.log")
    assert isinstance(prefill, PrefillRecord)
    assert (prefill.new_seq, prefill.new_token, prefill.cached_token, prefill.queue_req) == (1, 7, 1, 0)
    assert prefill.extra["cache_hit_rate"] == pytest.approx(0.125)
    assert isinstance(decode, DecodeRecord)
    assert (decode.running_req, decode.tokens, decode.gen_throughput) == (1, 20, 40.8)
    assert decode.accept_len is None and decode.cuda_graph is None
    assert decode.timestamp == datetime(2024, 8, 10, 12, 0, 2)
    assert decode_tp1.tags == {"TP": 1}


def test_2025_spec_period_format_with_trailing_separator() -> None:
    _, single, batch = records("era_2025_spec_period.log")
    assert isinstance(single, DecodeRecord)
    assert single.accept_len == 3.40 and single.cuda_graph is True and single.gen_throughput == 186.04
    assert single.extra == {}  # the trailing ", " adds no junk key
    assert (batch.running_req, batch.queue_req, batch.token_usage) == (16, 3, 0.18)


def test_late_2025_comma_format_tags_iter_and_cpu_graph() -> None:
    prefill, one, many, iterated = records("era_2025_late_comma.log")
    assert isinstance(prefill, PrefillRecord) and prefill.running_req == 12
    assert one.tags == {"DP": 0, "TP": 0, "EP": 0}
    assert (one.accept_len, one.accept_rate, one.gen_throughput) == (3.86, 0.97, 234.18)
    assert many.cuda_graph is False and many.running_req == 17 and many.tags["DP"] == 1
    assert iterated.forward_iter == 4021 and iterated.tags == {"TP": 0, "PP": 1}
    assert iterated.cuda_graph is False  # `cpu graph:` maps onto the same field


def test_hybrid_models_fall_back_to_full_and_swa_usage() -> None:
    prefill, swa, mamba = records("hybrid_models.log")
    assert prefill.token_usage == 0.05  # max(full, swa) like SGLang's own metric
    assert swa.tokens == 4000 and swa.token_usage == 0.30
    assert swa.extra["full_token_usage"] == 0.10 and swa.extra["swa_tokens"] == 3000
    assert mamba.token_usage == 0.12 and mamba.extra["mamba_usage"] == 0.04 and mamba.accept_rate == 0.73


def test_pd_disaggregation_fields_are_kept() -> None:
    prefill, decode = records("pd_disaggregation.log")
    assert prefill.input_throughput == 5000.0
    assert prefill.extra == {"prealloc_req": 0, "inflight_req": 3}
    assert decode.extra == {"pre_allocated_usage": 0.10, "prealloc_req": 2, "transfer_req": 1, "retracted_req": 0}
    assert decode.tags == {"DP": 31, "TP": 31, "EP": 31}


def test_npu_startup_lines() -> None:
    load, kv, graph, decode = records("npu.log")
    assert isinstance(load, LoadWeightRecord)
    assert (load.elapsed_s, load.model_type, load.mem_usage_gb, load.avail_mem_gb) == (23.18, "Glm4MoeLiteForCausalLM", 28.79, 32.02)
    assert isinstance(kv, KVCacheRecord) and kv.tokens == 383872 and kv.kv_size_gb == 19.36
    assert isinstance(graph, CudaGraphRecord) and graph.graph == "npu graph"
    assert (graph.phase, graph.elapsed_s, graph.mem_usage_gb, graph.avail_mem_gb) == ("end", 8.04, 0.80, 10.30)
    assert decode.cuda_graph is True


def test_startup_sequence_of_a_speculative_server() -> None:
    recs = records("startup_spec.log")
    adjusts = [r for r in recs if isinstance(r, AdjustRecord)]
    assert [(a.setting, a.value) for a in adjusts] == [
        ("max_running_requests", 48),
        ("disable_overlap_schedule", True),
        ("enable_mixed_chunk", False),
        ("speculative_num_draft_tokens", "speculative_num_steps + 1"),
        ("page_size", 64),
    ]
    begin = next(r for r in recs if isinstance(r, LoadWeightRecord) and r.phase == "begin")
    assert begin.avail_mem_gb == 94.5
    kv = next(r for r in recs if isinstance(r, KVCacheRecord))
    assert (kv.k_size_gb, kv.v_size_gb, kv.kv_size_gb) == (9.8, 9.8, pytest.approx(19.6))
    graphs = [r for r in recs if isinstance(r, CudaGraphRecord)]
    assert [(g.graph, g.phase, g.elapsed_s) for g in graphs] == [
        ("cuda graph", "begin", None),
        ("cuda graph", "end", 27.31),
        ("draft decode CUDA graph", "end", 7.02),
    ]
    summary = next(r for r in recs if isinstance(r, StartupSummaryRecord))
    assert (summary.max_total_num_tokens, summary.max_running_requests, summary.context_len) == (412000, 17, 262144)
    assert summary.available_gpu_mem_gb == 11.2 and summary.chunked_prefill_size == 8192
    access = [r for r in recs if isinstance(r, AccessRecord)]
    assert [(a.method, a.path, a.status) for a in access] == [
        ("GET", "/get_model_info", 200),
        ("POST", "/generate", 200),
        ("GET", "/health", 503),
    ]
    assert sum(isinstance(r, ReadyRecord) for r in recs) == 1
    assert isinstance(recs[13], TextRecord) and recs[13].level == "INFO"  # "Started server process"


def test_failure_lines_get_their_category() -> None:
    recs = records("failures.log")
    assert all(isinstance(r, ErrorRecord) for r in recs)
    assert [r.category for r in recs] == [
        "scheduler_exception",
        "traceback",
        "not_enough_memory",
        "cuda_graph_failed",
        "cuda_oom",
        "kv_pool_full",
        "kv_pool_full",
        "init_failed",
        "child_failed",
        "bad_arguments",
        "exception",
    ]
    assert recs[5].extra["retracted_reqs"] == 1 and recs[6].extra["retracted_reqs"] == 2
    assert [r.fatal for r in recs] == [True, False, True, True, True, False, False, True, True, True, False]


def test_journald_prefixes_and_pasted_line_missing_bracket() -> None:
    short, iso, pasted, systemd = records("journald.log")
    assert short.gen_throughput == 123.40 and short.timestamp == datetime(2026, 3, 11, 13, 53, 21)
    assert iso.tags == {"DP": 0, "TP": 0, "EP": 0} and iso.running_req == 4
    assert isinstance(pasted, DecodeRecord) and pasted.tags == {"TP": 0} and pasted.gen_throughput == 220.5
    assert isinstance(systemd, TextRecord) and systemd.message.startswith("Stopping sglang-qwen.service")


def test_every_record_keeps_its_raw_line() -> None:
    for path in LOGS.glob("*.log"):
        for line in path.read_text().splitlines():
            assert parse_line(line).raw == line


def test_unknown_keys_are_kept_typed() -> None:
    record = parse_line("[2026-01-01 00:00:00] Decode batch, #running-req: 3, new thing: 1.5, mode: fast, per dp: [1, 2], ")
    assert isinstance(record, DecodeRecord)
    assert record.extra == {"new_thing": 1.5, "mode": "fast", "per_dp": [1, 2]}


def test_log_stats_folds_the_latest_numbers() -> None:
    stats = LogStats.from_records(records("startup_spec.log") + records("era_2025_late_comma.log")[:3])
    assert stats.ready is True
    assert stats.max_running_requests == 17 and stats.max_total_num_tokens == 412000
    # The two decode lines come from DP0 and DP1: each rank tells its own batch, so the server's figures are their
    # sums (this test used to expect DP1's alone, the bug of issue 29) and accept len is over both ranks' forwards.
    assert (stats.gen_throughput, stats.running_req, stats.queue_req) == (pytest.approx(234.18 + 1890.40), 18, 9)
    forwards = 234.18 / 3.86 + 1890.40 / 2.05
    assert stats.accept_len == pytest.approx((234.18 + 1890.40) / forwards)
    assert stats.per_rank("gen_throughput") == [(0, 234.18), (1, 1890.40)]
    assert [a.setting for a in stats.adjustments][0] == "max_running_requests"
    stats.feed((LOGS / "failures.log").read_text().splitlines())
    assert stats.last_error is not None and stats.last_error.category == "not_enough_memory"  # the cause, not the last line
    stats.feed(["[2026-02-10 08:00:05 TP0] Load weight begin. avail mem=94.50 GB"])
    assert stats.ready is False  # a restart voids readiness


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_parse_line_never_raises_on_any_text(text: str) -> None:
    assert parse_line(text).raw == text


_FRAGMENTS = st.sampled_from(
    ["[2025-01-01 00:00:00 TP0] ", "Decode batch", "Prefill batch", ", ", ". ", ": ", "=", "#running-req", "(", ")",
     "[", "]", "1.5", "GB", "True", "%", "accept len", "Capture cuda graph end", "KV Cache is allocated.", "\x1b[31m"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=20).map("".join))
def test_parse_line_never_raises_on_near_miss_lines(text: str) -> None:
    assert parse_line(text).raw == text


def test_journal_parse_cli_json_lines() -> None:
    log = LOGS / "startup_spec.log"
    result = subprocess.run(
        [sys.executable, "-m", "specdec_tui", "journal", "parse", str(log), "--json"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == len(log.read_text().splitlines())
    summary = next(row for row in rows if row["kind"] == "startup_summary")
    assert summary["max_running_requests"] == 17 and summary["timestamp"].startswith("2026-02-10T08:01:42")


def test_journal_parse_cli_reads_stdin_and_reports_missing_file(tmp_path: Path) -> None:
    lines = (LOGS / "era_2025_late_comma.log").read_text()
    shown = subprocess.run(
        [sys.executable, "-m", "specdec_tui", "journal", "parse", "-"],
        input=lines.encode(),
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    assert "accept_len=3.86" in shown and "1890.40" in shown
    missing = subprocess.run(
        [sys.executable, "-m", "specdec_tui", "journal", "parse", str(tmp_path / "nope.log")],
        capture_output=True,
        timeout=60,
    )
    assert missing.returncode == 1 and b"no such file" in missing.stderr and b"Traceback" not in missing.stderr


def test_log_stats_keeps_the_cause_not_the_follow_up_lines() -> None:
    stats = LogStats().feed([
        "[2026-12-02 15:10:08 TP0] Load weight begin. avail mem=94.01 GB",
        "[2026-12-02 15:10:08 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        "[2026-12-02 15:10:08 TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "[2026-12-02 15:10:09] Received sigquit from a child process. It usually means the child failed.",
    ])
    assert stats.last_error is not None and stats.last_error.category == "not_enough_memory"
    # A new start forgets the old cause: the next error is the one shown.
    stats.feed(["[2026-12-02 15:11:00 TP0] Load weight begin. avail mem=94.01 GB",
                "[2026-12-02 15:11:02] Received sigquit from a child process. It usually means the child failed."])
    assert stats.last_error.category == "child_failed"


# upstream_2026.log: lines shaped as current upstream SGLang writes them; each test names the upstream file.


def test_upstream_deprecation_warnings_in_ansi_colour() -> None:
    # upstream: python/sglang/srt/server_args.py `print_deprecated_warning` (bold yellow) and its Deprecated*Action
    alias, removed = records("upstream_2026.log")[:2]
    assert isinstance(alias, DeprecationRecord) and alias.level == "WARNING"
    assert (alias.name, alias.replacement) == ("--enable-flashinfer-mla", "--attention-backend flashinfer")
    assert alias.message.endswith("instead.")  # the colour codes and `server_args.py:1184:` are gone
    assert isinstance(removed, DeprecationRecord) and (removed.name, removed.replacement) == ("--enable-ep-moe", "")


def test_upstream_spec_v2_notices() -> None:
    # upstream: python/sglang/srt/arg_groups/speculative_hook.py `_handle_eagle_family`; server_args.py (older)
    v2, v1, overlap_off = records("upstream_2026.log")[2:5]
    assert [(r.setting, r.value) for r in (v2, v1, overlap_off)] == [
        ("SGLANG_ENABLE_SPEC_V2", True),
        ("SGLANG_ENABLE_SPEC_V2", False),
        ("disable_overlap_schedule", True),
    ]


def test_upstream_concurrency_limit_line() -> None:
    # upstream: python/sglang/srt/mem_cache/concurrency_limit.py `format_concurrency_report`, `state_pool_limit`
    recs = records("upstream_2026.log")
    limit = recs[5]
    assert isinstance(limit, ConcurrencyLimitRecord) and isinstance(limit, AdjustRecord)
    assert (limit.value, limit.requested, limit.bound, limit.reduced) == (21, 48, "mamba_state_pool", True)
    assert limit.detail == "max_mamba_cache_size=84 per shard / 4 slots per request"
    assert limit.other_limits == {"max_running_requests": 48, "kv_capacity": 204112}
    assert limit.remedy.startswith("try one of: --max-mamba-cache-size 192 (memory permitting)")
    assert limit.summary() == "max_running_requests = 21 (asked 48), bound by mamba state"
    stats = LogStats.from_records(recs[:7])
    assert stats.max_running_requests == 21 and stats.max_running_bound(21) == "mamba state"
    assert stats.max_running_bound(17) == ""  # a number the line did not resolve to has no known bound
    assert [a.setting for a in stats.adjustments if isinstance(a, ConcurrencyLimitRecord)] == ["max_running_requests"]


def test_concurrency_limit_plain_form_and_other_bounds() -> None:
    # upstream: python/sglang/srt/mem_cache/concurrency_limit.py (the not-reduced form is logged at INFO)
    own = parse_line("[2026-11-20 09:01:10 TP0] max_running_requests=32 (per dp worker), bound by max_running_requests "
                     "(--max-running-requests=32); other limits: kv_capacity=204112.")
    assert isinstance(own, ConcurrencyLimitRecord)
    assert (own.value, own.requested, own.bound, own.reduced, own.remedy) == (32, None, "max_running_requests", False, "")
    assert own.bound_words == "your --max-running-requests"
    kv = parse_line("[2026-11-20 09:01:10 TP0] max_running_requests reduced from the requested 256 to 200 (per dp worker), "
                    "bound by kv_capacity (max_total_num_tokens=400 / 2). To raise it: raise --mem-fraction-static or "
                    "lower the context length.")
    assert isinstance(kv, ConcurrencyLimitRecord) and (kv.value, kv.bound_words, kv.other_limits) == (200, "KV capacity", {})
    assert kv.remedy == "raise --mem-fraction-static or lower the context length"
    stats = LogStats().feed([own.raw])
    assert stats.adjustments == []  # SGLang gave what was asked: nothing was adjusted
    stats.feed(["[2026-11-20 09:10:00 TP0] Load weight begin. avail mem=94.50 GB"])
    assert stats.max_running_bound(32) == ""  # a restart resolves it anew


def test_upstream_hybrid_pools_token_usage_is_the_fullest_pool() -> None:
    # upstream: python/sglang/srt/managers/scheduler_components/pool_stats_observer.py (`get_max_pool_usage` feeds the
    # token_usage gauge, observability/metrics_collector.py; the mamba pool is left out of the token count)
    prefill, mamba, swa, hisparse, plain = records("upstream_2026.log")[7:12]
    assert isinstance(prefill, PrefillRecord) and prefill.token_usage == 0.19
    assert isinstance(mamba, DecodeRecord) and (mamba.token_usage, mamba.tokens) == (0.14, 1502)
    assert mamba.extra["mamba_num"] == 12 and type(mamba.extra["mamba_num"]) is int
    assert (mamba.accept_len, mamba.accept_rate) == (2.84, 0.92)
    assert (swa.token_usage, swa.tokens, swa.extra["swa_tokens"]) == (0.35, 7000, 900)
    assert (hisparse.token_usage, hisparse.tokens) == (0.50, 2048)  # the GPU tier is the pool that fills
    assert hisparse.extra["cpu_tokens"] == 40960 and type(hisparse.extra["cpu_tokens"]) is int
    assert hisparse.cuda_graph is True and plain.cuda_graph is False  # `npu graph:` / `musa graph:` are the same flag
    assert (plain.tokens, plain.token_usage) == (512, 0.01)


def test_upstream_endpoint_deprecation_health_check_and_memory_errors() -> None:
    # upstream: python/sglang/srt/entrypoints/http_server.py (`/get_server_info`, `health_generate`);
    # python/sglang/srt/mem_cache/ pool configurators' `MemoryPoolConfig.__post_init__` (Not enough memory)
    endpoint, health, memory = records("upstream_2026.log")[12:15]
    assert isinstance(endpoint, DeprecationRecord) and (endpoint.name, endpoint.replacement) == ("/get_server_info", "/server_info")
    assert isinstance(health, ErrorRecord) and health.category == "health_check_failed" and not health.fatal
    assert health.extra == {"timeout_s": 20, "tic_start_time": "09:04:10", "last_heartbeat_time": "09:03:02"}
    assert isinstance(memory, ErrorRecord) and memory.category == "not_enough_memory" and memory.fatal
    assert memory.extra == {"mem_fraction_static": 0.8}


def test_integer_values_stay_integers() -> None:
    record = parse_line("[2026-01-01 00:00:00] Decode batch, #running-req: 3, mamba num: 12, buffer: 64 MB, ratio: 1.0, ")
    assert [(k, type(v)) for k, v in record.extra.items()] == [("mamba_num", int), ("buffer_mb", int), ("ratio", float)]
    assert record.running_req == 3 and type(record.running_req) is int


def test_server_args_line_gives_draft_tokens_and_older_lines_get_upstreams_accept_rate() -> None:
    # upstream: the launcher's `server_args=ServerArgs(...)` line; accept rate as
    # python/sglang/srt/managers/scheduler_components/metrics_reporter.py computes it (2025 lines did not print it)
    args = parse_line(
        "[2026-11-20 09:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3.5-122B-A10B', mem_fraction_static=0.85, "
        "max_running_requests=48, json_model_override_args='{\"a\": 1, \"b\": [2, 3]}', speculative_algorithm='EAGLE', "
        "speculative_draft_model_path=None, speculative_num_steps=3, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=4, speculative_accept_threshold_single=1.0)"
    )
    assert args.kind == "server_args"
    assert (args.speculative_algorithm, args.speculative_num_steps, args.speculative_num_draft_tokens) == ("EAGLE", 3, 4)
    assert (args.max_running_requests, args.mem_fraction_static) == (48, 0.85)
    stats = LogStats.from_records([args] + records("era_2025_spec_period.log")[1:2])
    assert stats.accept_len == 3.40 and stats.accept_rate == pytest.approx(2.40 / 3)
    assert LogStats.from_records(records("era_2025_spec_period.log")[1:2]).accept_rate is None  # draft tokens unknown


def test_log_stats_say_when_the_live_figures_were_logged_and_a_new_start_forgets_them() -> None:
    """An idle server logs no batch: its last figures stay. They carry when they were logged, and a restart clears
    them (the next server's figures are its own; seen as "#running-req 24" long after a benchmark had ended)."""
    stats = LogStats().feed([
        "[2026-12-04 16:03:49 TP0] Decode batch, #running-req: 24, #token: 9120, token usage: 0.92, accept len: 1.94, "
        "gen throughput (token/s): 482.50, #queue-req: 0, ",
    ])
    assert (stats.running_req, stats.gen_throughput) == (24, 482.5)
    assert stats.live_at == datetime(2026, 12, 4, 16, 3, 49)
    stats.feed(["[2026-12-04 16:05:00 TP0] Load weight begin. avail mem=94.01 GB"])
    assert (stats.running_req, stats.gen_throughput, stats.accept_len, stats.token_usage, stats.live_at) == (
        None, None, None, None, None)
