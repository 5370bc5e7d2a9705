"""Held-out current-upstream SGLang lines: written from upstream's format strings, never from the sim or the
sample logs, with numbers the other tests do not use. One test per line kind; each names its upstream file.

The lines are literal text as upstream's f-strings print them (the default `[%(asctime)s%(prefix)s] ` prefix,
or the `LEVEL file.py:line:` one of SGLang's docs runs), so a change to the parser that only fits our own
samples shows up here.
"""

from __future__ import annotations

import pytest

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import (
    AdjustRecord,
    ConcurrencyLimitRecord,
    DecodeRecord,
    DeprecationRecord,
    ErrorRecord,
    PrefillRecord,
)
from specdec_tui.core.sglang.stats import LogStats

# ---------------------------------------------------------------------------------------------
# upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py (`report_decode_stats`,
# `report_prefill_stats`, `_graph_backend_label`) with the pool parts of
# python/sglang/srt/managers/scheduler_components/pool_stats_observer.py (`PoolStats.get_*_usage_msg_parts`)

DECODE_CASES = [
    pytest.param(  # plain KV pool, no speculation
        "[2026-10-02 17:44:09 DP0 TP0 EP0] Decode batch, #running-req: 7, #cached-token: 0, #token: 31337, "
        "token usage: 0.27, cuda graph: True, gen throughput (token/s): 845.12, #queue-req: 4",
        dict(running_req=7, tokens=31337, token_usage=0.27, accept_len=None, cuda_graph=True, gen_throughput=845.12,
             queue_req=4),
        {"cached_token": 0},
        id="plain",
    ),
    pytest.param(  # hybrid SSM (Qwen3.5, Qwen3-Next): full pool then mamba pool; mamba fuller
        "[2026-10-02 17:44:10 TP0] Decode batch, #running-req: 19, #cached-token: 0, #full token: 88412, "
        "full token usage: 0.21, mamba num: 76, mamba usage: 0.83, accept len: 3.27, accept rate: 0.76, "
        "cuda graph: True, gen throughput (token/s): 1733.90, #queue-req: 11",
        dict(running_req=19, tokens=88412, token_usage=0.83, accept_len=3.27, accept_rate=0.76, cuda_graph=True,
             gen_throughput=1733.90, queue_req=11),
        {"cached_token": 0, "full_tokens": 88412, "full_token_usage": 0.21, "mamba_num": 76, "mamba_usage": 0.83},
        id="hybrid-ssm",
    ),
    pytest.param(  # hybrid SWA: the larger pool gives both the count and the usage
        "[2026-10-02 17:44:11 TP0] Decode batch, #running-req: 2, #cached-token: 0, #full token: 1200, "
        "full token usage: 0.04, #swa token: 9100, swa token usage: 0.66, cuda graph: False, "
        "gen throughput (token/s): 98.40, #queue-req: 0",
        dict(running_req=2, tokens=9100, token_usage=0.66, cuda_graph=False, gen_throughput=98.40, queue_req=0),
        {"cached_token": 0, "full_tokens": 1200, "full_token_usage": 0.04, "swa_tokens": 9100, "swa_token_usage": 0.66},
        id="hybrid-swa",
    ),
    pytest.param(  # SWA and SSM together: token usage is the max of all three pools, the count of the KV pools
        "[2026-10-02 17:44:12 TP0] Decode batch, #running-req: 5, #cached-token: 0, #full token: 640, "
        "full token usage: 0.31, #swa token: 320, swa token usage: 0.58, mamba num: 10, mamba usage: 0.42, "
        "accept len: 1.96, accept rate: 0.48, cuda graph: True, gen throughput (token/s): 410.00, #queue-req: 1",
        dict(running_req=5, tokens=640, token_usage=0.58, accept_len=1.96, accept_rate=0.48, queue_req=1),
        {"cached_token": 0, "full_tokens": 640, "full_token_usage": 0.31, "swa_tokens": 320, "swa_token_usage": 0.58,
         "mamba_num": 10, "mamba_usage": 0.42},
        id="swa-and-ssm",
    ),
    pytest.param(  # HiSparse on a plain KV pool: no `token usage` part at all, the GPU tier stands for it
        "[2026-10-02 17:44:13 TP0] Decode batch, #running-req: 9, #cached-token: 0, #gpu token: 16384, "
        "gpu token usage: 0.71, #cpu token: 262144, cpu token usage: 0.09, cuda graph: True, "
        "gen throughput (token/s): 777.77, #queue-req: 0",
        dict(running_req=9, tokens=16384, token_usage=0.71, cuda_graph=True),
        {"cached_token": 0, "gpu_tokens": 16384, "gpu_token_usage": 0.71, "cpu_tokens": 262144, "cpu_token_usage": 0.09},
        id="hisparse",
    ),
    pytest.param(  # Moore Threads device: the graph flag is named after it
        "[2026-10-02 17:44:14] Decode batch, #running-req: 1, #cached-token: 0, #token: 77, token usage: 0.00, "
        "musa graph: True, gen throughput (token/s): 61.05, #queue-req: 0",
        dict(running_req=1, tokens=77, token_usage=0.0, cuda_graph=True, gen_throughput=61.05),
        {"cached_token": 0},
        id="musa-graph",
    ),
    pytest.param(  # Ascend, SGLANG_LOG_FORWARD_ITERS, PD decode server queues
        "[2026-10-02 17:44:15 DP3 TP3] Decode batch [90210], #running-req: 33, #cached-token: 0, #token: 50000, "
        "token usage: 0.48, pre-allocated usage: 0.05, #prealloc-req: 2, #transfer-req: 1, #retracted-req: 0, "
        "npu graph: False, gen throughput (token/s): 1200.00, #queue-req: 0",
        dict(running_req=33, tokens=50000, token_usage=0.48, cuda_graph=False, forward_iter=90210),
        {"cached_token": 0, "pre_allocated_usage": 0.05, "prealloc_req": 2, "transfer_req": 1, "retracted_req": 0},
        id="npu-pd-iter",
    ),
]


@pytest.mark.parametrize(("line", "fields", "extra"), DECODE_CASES)
def test_decode_batch_lines(line: str, fields: dict[str, object], extra: dict[str, object]) -> None:
    record = parse_line(line)
    assert isinstance(record, DecodeRecord)
    for name, value in fields.items():
        assert getattr(record, name) == value, name
    assert record.extra == extra
    for key, value in extra.items():
        assert type(record.extra[key]) is type(value), key  # an integer stays an int, a ratio a float


def test_decode_line_with_mfu_and_device_timer_suffixes() -> None:
    record = parse_line(
        "[2026-10-02 17:44:16 TP0] Decode batch, #running-req: 4, #cached-token: 0, #token: 4000, token usage: 0.10, "
        "accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 300.25, #queue-req: 0, "
        "est. decode TFLOPS/s (per GPU): 12.34, est. read BW (GB/s per GPU): 1500.00, "
        "est. write BW (GB/s per GPU): 10.00, fwd occupancy: 97.50%"
    )
    assert isinstance(record, DecodeRecord)
    assert (record.accept_len, record.accept_rate, record.queue_req) == (2.50, 0.50, 0)
    assert record.extra["est_decode_tflops_s"] == 12.34 and record.extra["fwd_occupancy"] == pytest.approx(0.975)


@pytest.mark.parametrize(
    ("line", "usage", "extra_keys"),
    [
        pytest.param(
            "[2026-10-02 17:45:00 TP0] Prefill batch, #new-seq: 3, #new-token: 6144, #cached-token: 2048, "
            "full token usage: 0.12, mamba usage: 0.35, #running-req: 16, #queue-req: 2, #pending-token: 512, "
            "cuda graph: False, input throughput (token/s): 20480.50",
            0.35, {"full_token_usage", "mamba_usage"}, id="hybrid-ssm",
        ),
        pytest.param(
            "[2026-10-02 17:45:01 TP0] Prefill batch, #new-seq: 1, #new-token: 100, #cached-token: 0, "
            "full token usage: 0.40, swa token usage: 0.15, #running-req: 0, #queue-req: 0, #pending-token: 0, "
            "cuda graph: False, input throughput (token/s): 3000.00",
            0.40, {"full_token_usage", "swa_token_usage"}, id="hybrid-swa",
        ),
        pytest.param(
            "[2026-10-02 17:45:02 TP0] Prefill batch, #new-seq: 1, #new-token: 100, #cached-token: 0, "
            "token usage: 0.02, #running-req: 0, #queue-req: 0, #pending-token: 0, #bootstrap-req: 1, "
            "#inflight-req: 0, npu graph: False, input throughput (token/s): 3000.00",
            0.02, {"bootstrap_req", "inflight_req"}, id="pd-prefill",
        ),
    ],
)
def test_prefill_batch_lines(line: str, usage: float, extra_keys: set[str]) -> None:
    record = parse_line(line)
    assert isinstance(record, PrefillRecord) and record.token_usage == usage
    assert extra_keys <= set(record.extra) and record.input_throughput is not None
    assert type(record.extra["pending_token"]) is int


# ---------------------------------------------------------------------------------------------
# upstream: python/sglang/srt/mem_cache/concurrency_limit.py (`user_request_limit`, `kv_capacity_limit`,
# `heuristic_limit`, `state_pool_limit`, `format_concurrency_report`)

CONCURRENCY_CASES = [
    pytest.param(
        "[2026-10-02 17:40:00 TP0] max_running_requests reduced from the requested 64 to 13 (per dp worker), bound by "
        "mamba_state_pool (max_mamba_cache_size=65 per shard / 5 slots per request); other limits: "
        "max_running_requests=64, kv_capacity=150000. To raise it: try one of: --max-mamba-cache-size 320 (memory "
        "permitting), a larger --mamba-full-memory-ratio, or --mamba-ssm-dtype bfloat16.",
        (13, 64, "mamba_state_pool", "mamba state", {"max_running_requests": 64, "kv_capacity": 150000}),
        id="reduced-by-mamba",
    ),
    pytest.param(
        "[2026-10-02 17:40:00 TP0] max_running_requests=99 (per dp worker), bound by mamba_state_pool "
        "(max_mamba_cache_size=297 per shard / 3 slots per request); other limits: heuristic_estimate=2048, "
        "kv_capacity=350000. To raise it: try one of: --max-running-requests to state a target and get an exact "
        "size, a larger --mamba-full-memory-ratio, or --mamba-ssm-dtype bfloat16.",
        (99, None, "mamba_state_pool", "mamba state", {"heuristic_estimate": 2048, "kv_capacity": 350000}),
        id="unrequested-mamba",
    ),
    pytest.param(
        "[2026-10-02 17:40:00 TP0] max_running_requests reduced from the requested 512 to 300 (per dp worker), bound "
        "by kv_capacity (max_total_num_tokens=600 / 2); other limits: max_running_requests=512. To raise it: raise "
        "--mem-fraction-static or lower the context length.",
        (300, 512, "kv_capacity", "KV capacity", {"max_running_requests": 512}),
        id="reduced-by-kv",
    ),
    pytest.param(
        "[2026-10-02 17:40:00 TP0] max_running_requests=3072 (per dp worker), bound by heuristic_estimate "
        "(token_capacity / context_len * 512, clamped to [2048, 4096]); other limits: kv_capacity=900000. To raise "
        "it: set --max-running-requests explicitly.",
        (3072, None, "heuristic_estimate", "heuristic estimate", {"kv_capacity": 900000}),
        id="heuristic",
    ),
    pytest.param(
        "[2026-10-02 17:40:00 TP0] max_running_requests=40 (per dp worker), bound by max_running_requests "
        "(--max-running-requests=40).",
        (40, None, "max_running_requests", "your --max-running-requests", {}),
        id="sole-user-limit",
    ),
]


@pytest.mark.parametrize(("line", "expected"), CONCURRENCY_CASES)
def test_concurrency_limit_lines(line: str, expected: tuple[object, ...]) -> None:
    record = parse_line(line)
    assert isinstance(record, ConcurrencyLimitRecord) and record.setting == "max_running_requests"
    value, requested, bound, words, others = expected
    assert (record.value, record.requested, record.bound, record.bound_words, record.other_limits) == (
        value, requested, bound, words, others
    )
    assert record.detail and "(" not in record.detail
    stats = LogStats().feed([line])
    assert stats.max_running_requests == value and stats.max_running_bound(value) == words
    assert (record in stats.adjustments) == (requested is not None)


# ---------------------------------------------------------------------------------------------
# upstream: python/sglang/srt/server_args.py `print_deprecated_warning` (`\033[1;33m…\033[0m`) and the
# Deprecated*Action classes; python/sglang/srt/entrypoints/http_server.py (deprecated endpoints)

DEPRECATION_CASES = [
    pytest.param(
        "[2026-10-02 17:39:00] \x1b[1;33m'--enable-old-cache' is deprecated and will be removed in a future release. "
        "Use '--cache-mode old' instead.\x1b[0m",
        ("--enable-old-cache", "--cache-mode old"), id="store-true-with-replacement",
    ),
    pytest.param(
        "[2026-10-02 17:39:00] WARNING server_args.py:412: \x1b[1;33m'--old-ratio' is deprecated and will be removed "
        "in a future release.\x1b[0m",
        ("--old-ratio", ""), id="alias-without-replacement-docs-prefix",
    ),
    pytest.param(
        "[2026-10-02 17:39:00] \x1b[1;33mThe command line argument '--enable-dp-lm-head' is deprecated and will be "
        "removed in future versions.\x1b[0m",
        ("--enable-dp-lm-head", ""), id="no-op-flag",
    ),
    pytest.param(
        "[2026-10-02 17:39:30] Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
        "Please use '/model_info' instead.",
        ("/get_model_info", "/model_info"), id="endpoint",
    ),
    pytest.param(
        "[2026-10-02 17:39:31] Endpoint '/get_server_info' is deprecated and will be removed in a future version. "
        "Please use '/server_info' instead.",
        ("/get_server_info", "/server_info"), id="get-server-info",
    ),
]


@pytest.mark.parametrize(("line", "expected"), DEPRECATION_CASES)
def test_deprecation_warnings(line: str, expected: tuple[str, str]) -> None:
    record = parse_line(line)
    assert isinstance(record, DeprecationRecord)
    assert (record.name, record.replacement) == expected
    assert "\x1b" not in record.message and record.message.startswith(("'", "The ", "Endpoint "))


# ---------------------------------------------------------------------------------------------
# upstream: python/sglang/srt/entrypoints/http_server.py (`health_generate`); the pool configurators'
# `MemoryPoolConfig.__post_init__` (python/sglang/srt/mem_cache/, model_executor/model_runner_kv_cache_mixin.py)


def test_health_check_failed_is_an_error_that_is_not_fatal() -> None:
    record = parse_line(
        "[2026-10-02 18:00:41] Health check failed. Server couldn't get a response from detokenizer for last 60 "
        "seconds. tic start time: 18:00:21. last_heartbeat time: 17:58:02"
    )
    assert isinstance(record, ErrorRecord) and record.category == "health_check_failed" and not record.fatal
    assert record.extra == {"timeout_s": 60, "tic_start_time": "18:00:21", "last_heartbeat_time": "17:58:02"}
    stats = LogStats().feed([record.raw])
    assert stats.last_error is not None and stats.last_error.category == "health_check_failed"


@pytest.mark.parametrize(("text", "value"), [("0.93", 0.93), ("0.7", 0.7), ("1", 1)])
def test_not_enough_memory_keeps_the_mem_fraction(text: str, value: float) -> None:
    record = parse_line(
        "[2026-10-02 18:01:00 TP2] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        f"Current value: mem_fraction_static={text}"
    )
    assert isinstance(record, ErrorRecord) and record.category == "not_enough_memory" and record.fatal
    assert record.extra == {"mem_fraction_static": value} and type(record.extra["mem_fraction_static"]) is type(value)


# ---------------------------------------------------------------------------------------------
# upstream: python/sglang/srt/arg_groups/speculative_hook.py (`_handle_eagle_family`, Frozen-KV MTP, DVR) and
# python/sglang/srt/server_args.py (older releases' wording, logged with `WARNING server_args.py:N:`)

SPEC_NOTICES = [
    ("[2026-10-02 17:39:01] Spec v2 is enabled by default for eagle/eagle3/standalone speculative decoding.",
     "SGLANG_ENABLE_SPEC_V2", True),
    ("[2026-10-02 17:39:01] Spec v1 is used for eagle/eagle3/standalone speculative decoding because spec v2 "
     "currently only supports topk = 1.", "SGLANG_ENABLE_SPEC_V2", False),
    ("[2026-10-02 17:39:01] Spec v1 is used for eagle/eagle3/standalone speculative decoding because overlap "
     "schedule is disabled.", "SGLANG_ENABLE_SPEC_V2", False),
    ("[2026-10-02 17:39:01] Spec v2 is enabled for multi-layer EAGLE speculative decoding.",
     "SGLANG_ENABLE_SPEC_V2", True),
    ("[2026-10-02 17:39:01] Overlap spec v2 is enabled for DVR EAGLE.", "SGLANG_ENABLE_SPEC_V2", True),
    ("[2026-10-02 17:39:01] Synchronous spec v2 is used for DVR EAGLE.", "SGLANG_ENABLE_SPEC_V2", True),
    ("[2026-02-14 02:10:40] WARNING server_args.py:2341: Spec v2 is enabled for eagle/eagle3 speculative decoding "
     "and overlap schedule is turned on.", "SGLANG_ENABLE_SPEC_V2", True),
    ("[2026-02-05 18:37:42] WARNING server_args.py:2304: Overlap scheduler is disabled when spec v2 is off or using "
     "unsupported speculative algorithm. You can set env SGLANG_ENABLE_SPEC_V2=True to enable the experimental "
     "overlap scheduler. ", "disable_overlap_schedule", True),
    ("[2026-10-02 17:39:01] Overlap scheduler is disabled when using Frozen-KV MTP speculative decoding (spec v2 is "
     "not supported yet).", "disable_overlap_schedule", True),
]


@pytest.mark.parametrize(("line", "setting", "value"), SPEC_NOTICES)
def test_spec_v2_notices(line: str, setting: str, value: bool) -> None:
    record = parse_line(line)
    assert isinstance(record, AdjustRecord) and (record.setting, record.value) == (setting, value)
    assert not record.message.startswith(("WARNING", "server_args.py"))


# ---------------------------------------------------------------------------------------------
# upstream: the launcher logs `server_args=ServerArgs(...)` (python/sglang/srt/server_args.py's dataclass repr);
# the accept rate then follows python/sglang/srt/managers/scheduler_components/metrics_reporter.py


def test_server_args_line_and_accept_rate_of_a_line_without_one() -> None:
    args = parse_line(
        "[2026-10-02 17:38:59] server_args=ServerArgs(model_path='Qwen/Qwen3-Next-80B-A3B-Instruct', "
        "tokenizer_path='Qwen/Qwen3-Next-80B-A3B-Instruct', mem_fraction_static=0.9, max_running_requests=None, "
        "lora_paths=None, speculative_algorithm='EAGLE', speculative_num_steps=2, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=3, disable_overlap_schedule=False)"
    )
    assert args.kind == "server_args" and args.summary().startswith("server args algorithm=EAGLE steps=2")
    stats = LogStats.from_records([args, parse_line(
        "[2026-10-02 17:50:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 2.40, "
        "cuda graph: True, gen throughput (token/s): 150.00, #queue-req: 0"
    )])
    assert stats.num_draft_tokens == 3 and stats.accept_rate == pytest.approx(0.70)
