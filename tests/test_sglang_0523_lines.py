"""SGLang 0.5.23's log lines, written from its own format strings (the numbers are ours), read as the panel reads them.

Each line cites where 0.5.23 writes it (python/sglang/srt/…); the parser and `LogStats` are the real ones.
"""

from __future__ import annotations

import pytest

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import (
    AdjustRecord,
    CudaGraphRecord,
    DecodeRecord,
    ErrorRecord,
    KVCacheRecord,
    LoadWeightRecord,
    ServerArgsRecord,
)
from specdec_tui.core.sglang.stats import LogStats

# entrypoints/engine.py: logger.info(f"server_args={_server_args_for_logging(server_args)}"), a resolved_dict()
SERVER_ARGS = (
    "[2026-12-04 10:00:00] server_args={'model_path': 'Qwen/Qwen3.5-122B-A10B', 'tokenizer_path': "
    "'Qwen/Qwen3.5-122B-A10B', 'tp_size': 4, 'mem_fraction_static': 0.82, 'max_running_requests': 48, "
    "'speculative_algorithm': 'EAGLE', 'speculative_num_steps': 3, 'speculative_eagle_topk': 1, "
    "'speculative_num_draft_tokens': 4, 'json_model_override_args': '{\"a\": 1}', 'lora_paths': None, "
    "'cuda_graph_config': {'decode': {'backend': 'full', 'max_bs': 64}}, 'enable_dp_attention': False}"
)


def test_the_dict_form_of_server_args_gives_every_setting() -> None:
    record = parse_line(SERVER_ARGS)
    assert isinstance(record, ServerArgsRecord)
    assert (record.speculative_algorithm, record.speculative_num_steps, record.speculative_num_draft_tokens) == (
        "EAGLE", 3, 4)
    assert (record.max_running_requests, record.mem_fraction_static) == (48, 0.82)
    assert record.args["cuda_graph_config"] == {"decode": {"backend": "full", "max_bs": 64}}
    assert record.args["json_model_override_args"] == '{"a": 1}' and record.args["lora_paths"] is None
    assert record.args["enable_dp_attention"] is False and record.args["tp_size"] == 4


def test_a_value_that_is_no_literal_keeps_its_text_and_the_others_their_values() -> None:
    line = SERVER_ARGS.replace("'lora_paths': None", "'load_format': <LoadFormat.AUTO: 'auto'>")
    record = parse_line(line)
    assert isinstance(record, ServerArgsRecord)
    assert record.args["load_format"] == "<LoadFormat.AUTO: 'auto'>"
    assert record.speculative_num_draft_tokens == 4 and record.args["tp_size"] == 4


def test_the_draft_token_count_learned_from_the_dict_gives_an_older_decode_line_its_accept_rate() -> None:
    stats = LogStats().feed([SERVER_ARGS, "[2026-12-04 10:01:00 TP0] Decode batch, #running-req: 3, #token: 900, "
                             "token usage: 0.01, accept len: 3.10, gen throughput (token/s): 300.00, #queue-req: 0"])
    assert stats.num_draft_tokens == 4 and stats.accept_rate == pytest.approx(2.10 / 3)


# utils/watchdog.py SubprocessWatchdog._check_processes; tokenizer_manager.py running_phase_sigquit_handler
@pytest.mark.parametrize(
    ("line", "category", "cause"),
    [
        ("[2026-12-04 10:05:00] Subprocess scheduler_0 (pid=51234) crashed with exit code -9. Triggering SIGQUIT "
         "for cleanup...", "subprocess_crashed", "scheduler_0 killed by SIGKILL"),
        ("[2026-12-04 10:05:00] Subprocess detokenizer (pid=51240) crashed with exit code 1. Triggering SIGQUIT "
         "for cleanup...", "subprocess_crashed", "detokenizer exited with code 1"),
        ("[2026-12-04 10:05:00] Subprocess scheduler_1 (pid=51235) crashed with exit code -6. Triggering SIGQUIT "
         "for cleanup...", "subprocess_crashed", "scheduler_1 killed by SIGABRT"),
        ("[2026-12-04 10:05:00] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
         "watchdog_timeout", "Scheduler made no progress for 300 s"),
        ("[2026-12-04 10:05:00] Scheduler or DataParallelController 51234 terminated with -11",
         "subprocess_crashed", "scheduler (pid 51234) killed by SIGSEGV"),
    ],
)
def test_a_crashed_or_stuck_process_is_a_fatal_error_with_its_cause(line: str, category: str, cause: str) -> None:
    record = parse_line(line)
    assert isinstance(record, ErrorRecord) and record.category == category and record.fatal
    assert record.cause.startswith(cause) and cause in record.summary()


def test_a_soft_watchdog_and_a_failed_monitor_thread_are_not_fatal() -> None:
    soft = parse_line("[2026-12-04 10:05:00] DetokenizerManager watchdog timeout (self.watchdog_timeout=60, "
                      "self.soft=True)")
    thread = parse_line("[2026-12-04 10:05:00] SubprocessWatchdog thread crashed: list index out of range")
    assert isinstance(soft, ErrorRecord) and not soft.fatal
    assert isinstance(thread, ErrorRecord) and not thread.fatal


def test_the_crash_sequence_names_the_kill_and_a_named_cause_outranks_it() -> None:
    sigquit = ("[2026-12-04 10:05:00] SIGQUIT received. signum=3, frame=<frame at 0x7f3c, file "
               "'/usr/lib/python3/dist-packages/sglang/srt/managers/tokenizer_manager.py', line 4074>. "
               "It usually means one child failed.")
    crashed = ("[2026-12-04 10:05:00] Subprocess scheduler_0 (pid=51234) crashed with exit code -9. "
               "Triggering SIGQUIT for cleanup...")
    stats = LogStats().feed([crashed, sigquit])
    assert stats.last_error is not None and stats.last_error.category == "subprocess_crashed"
    assert "SIGKILL" in stats.last_error.cause and stats.error_lines == 2
    oom = "[2026-12-04 10:04:59 TP0] Scheduler hit an exception: torch.OutOfMemoryError: CUDA out of memory."
    stats = LogStats().feed([oom, crashed, sigquit])
    assert stats.last_error is not None and stats.last_error.category == "cuda_oom"


# managers/scheduler_components/metrics_reporter.py report_decode_stats, logged by every DP rank's attn-TP rank 0
def _decode(rank: int, tp: int, second: int, running: int, usage: float, accept: float, rate: float,
            throughput: float, queue: int) -> str:
    return (f"[2026-12-04 10:10:{second:02d} DP{rank} TP{tp} EP{tp}] Decode batch, #running-req: {running}, "
            f"#token: {running * 700}, token usage: {usage:.2f}, accept len: {accept:.2f}, accept rate: {rate:.2f}, "
            f"cuda graph: True, gen throughput (token/s): {throughput:.2f}, #queue-req: {queue}")


def test_each_dp_rank_keeps_its_figures_and_the_server_figures_are_their_sums() -> None:
    stats = LogStats().feed([_decode(0, 0, 0, 40, 0.31, 3.0, 0.67, 1000.0, 2), _decode(1, 4, 1, 4, 0.05, 2.0, 0.33, 100.0, 1)])
    assert stats.gen_throughput == pytest.approx(1100.0)  # not 100: DP1's line does not replace DP0's
    assert (stats.running_req, stats.queue_req, stats.token_usage) == (44, 3, 0.31)
    assert stats.per_rank("gen_throughput") == [(0, 1000.0), (1, 100.0)]
    assert stats.per_rank("running_req") == [(0, 40.0), (1, 4.0)]
    # accept len over both ranks' verify forwards: 1,100 tokens over 1000/3 + 100/2 forwards
    assert stats.accept_len == pytest.approx(1100.0 / (1000.0 / 3.0 + 100.0 / 2.0))
    # a new line of DP0 replaces DP0's figures only
    stats.feed([_decode(0, 0, 2, 38, 0.30, 3.0, 0.67, 900.0, 0)])
    assert stats.gen_throughput == pytest.approx(1000.0) and stats.running_req == 42


def test_a_rank_that_went_idle_stops_counting_in_the_sum() -> None:
    stats = LogStats().feed([_decode(1, 4, 0, 4, 0.05, 2.0, 0.33, 100.0, 0), _decode(0, 0, 1, 40, 0.3, 3.0, 0.67, 1000.0, 0)])
    assert stats.gen_throughput == pytest.approx(1100.0)
    later = _decode(0, 0, 30, 40, 0.3, 3.0, 0.67, 1000.0, 0)  # DP1 has logged nothing for 30 s: it serves nothing
    stats.feed([later])
    assert stats.gen_throughput == pytest.approx(1000.0) and stats.running_req == 40


def test_lines_without_a_dp_rank_are_the_whole_server() -> None:
    stats = LogStats().feed([_decode(0, 0, 0, 40, 0.31, 3.0, 0.67, 1000.0, 2).replace(" DP0", "")])
    assert stats.gen_throughput == 1000.0 and stats.per_rank("gen_throughput") == []


# arg_groups/speculative_hook.py _handle_eagle_family, when the overlap scheduler is off
def test_non_overlap_spec_v2_says_the_overlap_scheduler_is_off() -> None:
    record = parse_line("[2026-12-04 10:00:00] Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone "
                        "speculative decoding.")
    assert isinstance(record, AdjustRecord)
    assert (record.setting, record.value) == ("disable_overlap_schedule", True)


# model_executor/model_runner.py load_model; mem_cache/memory_pool.py _finalize_allocation_log;
# model_executor/model_runner_components/cuda_graph_setup.py capture_decode_graph; speculative/eagle_worker_v2.py
def test_start_up_lines_of_0_5_23() -> None:
    lines = [
        "[2026-12-04 10:00:05 TP0] Load weight begin. avail mem=78.12 GB",
        "[2026-12-04 10:00:45 TP0] Load weight end. elapsed=40.20 s, type=Qwen3_5MoeForCausalLM, avail mem=17.30 GB, "
        "mem usage=60.82 GB.",
        "[2026-12-04 10:00:50 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 412000, K size: 3.93 GB, "
        "V size: 3.93 GB",
        "[2026-12-04 10:00:51 TP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, "
        "avail mem=7.10 GB",
        "[2026-12-04 10:01:20 TP0] Capture target verify CUDA graph end. bs=[1, 2, 4, 8, 16, 24, 32], "
        "elapsed=29.04 s, mem usage=1.21 GB, avail mem=5.89 GB.",
        "[2026-12-04 10:01:21 TP0] Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
        "bs=[1, 2, 4, 8, 16, 24, 32], avail mem=5.89 GB",
    ]
    records = [parse_line(line) for line in lines]
    end = records[1]
    assert isinstance(end, LoadWeightRecord) and (end.elapsed_s, end.model_type, end.mem_usage_gb) == (
        40.2, "Qwen3_5MoeForCausalLM", 60.82)
    kv = records[2]
    assert isinstance(kv, KVCacheRecord) and (kv.tokens, kv.kv_size_gb) == (412000, pytest.approx(7.86))
    captured = records[4]
    assert isinstance(captured, CudaGraphRecord) and captured.graph == "target verify CUDA graph"
    assert (captured.phase, captured.elapsed_s, captured.mem_usage_gb, captured.avail_mem_gb) == ("end", 29.04, 1.21, 5.89)
    stats = LogStats.from_records(records)
    assert stats.phase == "capturing draft decode CUDA graphs" and stats.kv_cache_tokens == 412000


def test_a_decode_line_of_0_5_23_has_no_cached_token_count() -> None:
    record = parse_line(_decode(0, 0, 0, 4, 0.02, 2.5, 0.5, 400.0, 0).replace(" DP0", ""))
    assert isinstance(record, DecodeRecord) and record.extra == {}
    assert (record.running_req, record.tokens, record.cuda_graph) == (4, 2800, True)


# mem_cache/memory_pool.py _finalize_allocation_log: a labelled pool, and the size after a capture resized it
def test_a_labelled_kv_pool_and_the_va_upper_bound_are_kv_cache_lines() -> None:
    labelled = parse_line("[2026-12-04 10:00:50 TP0] MiniMax MSA-v1 main NVFP4 KV Cache is allocated. "
                          "dtype: torch.float8_e4m3fn, #tokens: 90000, KV size: 2.10 GB")
    assert isinstance(labelled, KVCacheRecord) and labelled.pool == "MiniMax MSA-v1 main NVFP4 KV"
    assert (labelled.tokens, labelled.kv_size_gb) == (90000, 2.1)
    bound = parse_line("[2026-12-04 10:01:30 TP0] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 500000, "
                       "K size: 4.77 GB, V size: 4.77 GB")
    assert isinstance(bound, KVCacheRecord) and bound.pool == "KV" and bound.tokens == 500000
    assert LogStats.from_records([bound]).kv_cache_tokens == 500000
