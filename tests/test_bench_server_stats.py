"""The level's acceptance from SGLang's /metrics text, its per-request details, or the stream, in that order.

The /metrics text below is what prometheus_client writes for SGLang's collectors in multiprocess mode:
`# HELP`/`# TYPE` lines named `<counter>_total`, labels sorted by name, values as floatToGoString
(large values Go-style, `1.234567e+06`), no `_created` samples.
upstream: python/sglang/srt/observability/metrics_collector.py (TokenizerMetricsCollector:
generation_tokens_total labels model_name, engine_type, is_streaming; spec_verify_calls_total labels
model_name, engine_type; SchedulerMetricsCollector.spec_accept_length gauge).
"""

from __future__ import annotations

import pytest

from specdec_tui.bench.client import RequestRecord
from specdec_tui.bench.server_stats import (
    LevelAcceptance,
    accept_from_counters,
    accept_from_details,
    level_acceptance,
)
from specdec_tui.bench.stats import STREAM_ACCEPT_WARNING, LevelInputs, build_level_result
from specdec_tui.core.prometheus_text import parse_metrics
from specdec_tui.core.results import AcceptSource, LevelResult

MODEL = "Qwen/Qwen3.5-122B-A10B"
SCHED = f'engine_type="unified",model_name="{MODEL}",moe_ep_rank="0",pp_rank="0",tp_rank="0"'


def metrics_text(tokens_stream: float, tokens_plain: float, verify: float | None, gauge: float = 9.5) -> str:
    """SGLang's /metrics with metrics on: the scheduler's gauge (a recent average), then the tokenizer's counters."""
    def go(v: float) -> str:  # prometheus_client.utils.floatToGoString for the values used here
        s = repr(float(v))
        dot = s.find(".")
        return f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.") + f"e+0{dot - 1}" if v > 0 and dot > 6 else s

    lines = [
        "# HELP sglang:spec_accept_length Mean acceptance length of speculative decoding "
        "(accepted drafts + bonus token per forward).",
        "# TYPE sglang:spec_accept_length gauge",
        f"sglang:spec_accept_length{{{SCHED}}} {go(gauge)}",
        "# HELP sglang:generation_tokens_total Number of generation tokens processed.",
        "# TYPE sglang:generation_tokens_total counter",
        f'sglang:generation_tokens_total{{engine_type="unified",is_streaming="false",model_name="{MODEL}"}} '
        f"{go(tokens_plain)}",
        f'sglang:generation_tokens_total{{engine_type="unified",is_streaming="true",model_name="{MODEL}"}} '
        f"{go(tokens_stream)}",
        "# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.",
        "# TYPE sglang:time_to_first_token_seconds histogram",
        f'sglang:time_to_first_token_seconds_bucket{{engine_type="unified",is_streaming="true",le="0.1",'
        f'model_name="{MODEL}"}} 3.0',
        f'sglang:time_to_first_token_seconds_bucket{{engine_type="unified",is_streaming="true",le="+Inf",'
        f'model_name="{MODEL}"}} 7.0',
    ]
    if verify is not None:  # a labelled counter has no sample until it is first incremented
        lines += [
            "# HELP sglang:spec_verify_calls_total Number of speculative decoding verification calls.",
            "# TYPE sglang:spec_verify_calls_total counter",
            f'sglang:spec_verify_calls_total{{engine_type="unified",model_name="{MODEL}"}} {go(verify)}',
        ]
    return "\n".join(lines) + "\n"


def test_counters_sum_over_label_sets_and_read_go_style_floats() -> None:
    m = parse_metrics(metrics_text(tokens_stream=1234567, tokens_plain=33, verify=402_000))
    assert "1.234567e+06" in metrics_text(1234567, 33, 402_000)  # the text really is Go-style
    assert m["sglang:generation_tokens_total"] == 1234567 + 33
    assert m["sglang:spec_verify_calls_total"] == 402_000
    assert m["sglang:time_to_first_token_seconds_bucket"] == 10.0  # buckets add like any label set


def test_the_levels_figure_is_the_counters_delta_not_the_gauge() -> None:
    before = parse_metrics(metrics_text(tokens_stream=50_000, tokens_plain=0, verify=25_000, gauge=2.0))
    after = parse_metrics(metrics_text(tokens_stream=50_000 + 3710, tokens_plain=0, verify=26_000, gauge=2.3))
    assert accept_from_counters(before, after) == pytest.approx(3.71)  # lifetime: 2.1, gauge: 2.3


def test_a_verify_counter_first_seen_after_the_level_started_at_zero() -> None:
    before = parse_metrics(metrics_text(tokens_stream=1, tokens_plain=0, verify=None))  # only the warm-up so far
    after = parse_metrics(metrics_text(tokens_stream=1 + 285, tokens_plain=0, verify=100))
    assert accept_from_counters(before, after) == pytest.approx(2.85)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, None),  # metrics off: /metrics is 404
        (metrics_text(10, 0, None), metrics_text(500, 0, None)),  # no speculative decoding: no verify counter
        (metrics_text(900, 0, 300), metrics_text(900, 0, 300)),  # no request finished in the window
        (metrics_text(900, 0, 300), metrics_text(120, 0, 40)),  # the server restarted: counters went back
    ],
)
def test_no_counter_figure_without_a_clean_delta(before: str | None, after: str | None) -> None:
    b = parse_metrics(before) if before is not None else None
    a = parse_metrics(after) if after is not None else None
    assert accept_from_counters(b, a) is None


def test_details_sum_tokens_and_verify_steps_over_requests() -> None:
    assert accept_from_details([(256, 69), (256, 70), (100, 30)]) == pytest.approx(612 / 169)
    assert accept_from_details([(1, 0)]) is None  # a one-token request: prefill only, no verify step
    assert accept_from_details([]) is None


def test_sources_in_order_counters_details_stream() -> None:
    assert level_acceptance(3.7, 3.6, 3.5) == LevelAcceptance(3.7, AcceptSource.SERVER_COUNTERS)
    assert level_acceptance(None, 3.6, 3.5) == LevelAcceptance(3.6, AcceptSource.REQUEST_DETAILS)
    assert level_acceptance(None, None, 3.5) == LevelAcceptance(3.5, AcceptSource.STREAM_ESTIMATE)
    assert level_acceptance(None, None, None) == LevelAcceptance(None, None)


def _record(tokens: int, chunk_sizes: list[int], verify: int | None) -> RequestRecord:
    rec = RequestRecord(measured=True, start_ns=1_000, first_content_ns=2_000, end_ns=2_000 + 1_000 * len(chunk_sizes))
    total = 0
    for i, k in enumerate(chunk_sizes):
        total += k
        rec.times.append(2_000 + 1_000 * i)
        rec.deltas.append(k)
    rec.usage_total, rec.finish_reason, rec.done = tokens, "length", True
    if verify is not None:
        rec.spec_verify_ct, rec.spec_accept_length = verify, tokens / verify
    return rec


def test_level_result_records_the_source_it_used() -> None:
    records = [_record(12, [1, 3, 3, 3, 2], verify=3), _record(12, [1, 3, 3, 3, 2], verify=4)]
    by_counters = build_level_result(records, LevelInputs(concurrency=2, accept_from_counters=3.5))
    by_details = build_level_result(records, LevelInputs(concurrency=2))
    by_stream = build_level_result([_record(12, [1, 3, 3, 3, 2], None)] * 2, LevelInputs(concurrency=2))
    assert (by_counters.accept_length, by_counters.accept_source) == (3.5, AcceptSource.SERVER_COUNTERS)
    assert (by_details.accept_length, by_details.accept_source) == (pytest.approx(24 / 7), AcceptSource.REQUEST_DETAILS)
    assert by_stream.accept_length_server is None and by_stream.accept_source is AcceptSource.STREAM_ESTIMATE
    assert by_stream.accept_length == pytest.approx(11 / 4) and STREAM_ACCEPT_WARNING in by_stream.warnings
    assert STREAM_ACCEPT_WARNING not in by_details.warnings


def test_counters_far_from_the_requests_own_details_say_other_traffic_reached_the_server() -> None:
    records = [_record(12, [1, 3, 3, 3, 2], verify=3), _record(12, [1, 3, 3, 3, 2], verify=4)]  # 24 / 7 = 3.43
    close = build_level_result(records, LevelInputs(concurrency=2, accept_from_counters=3.5))
    shared = build_level_result(records, LevelInputs(concurrency=2, accept_from_counters=2.6))
    assert not any("other traffic" in w for w in close.warnings)
    assert shared.accept_length == 2.6 and any("2.60" in w and "3.43" in w and "other traffic" in w
                                               for w in shared.warnings)


def test_old_session_levels_load_without_a_source_and_new_ones_round_trip() -> None:
    old = LevelResult.from_dict({"concurrency": 4, "accept_length_server": 3.1, "accept_length_client": 2.9})
    assert old.accept_source is None and old.accept_length == 3.1
    new = LevelResult(concurrency=4, accept_length_server=3.4, accept_length_source="per-request details")
    assert LevelResult.from_dict(new.to_dict()).accept_source is AcceptSource.REQUEST_DETAILS
    assert LevelResult.from_dict({"concurrency": 1, "accept_length_source": "guessed"}).accept_source is None


def test_the_doctors_metrics_poll_loads_no_benchmark_client() -> None:
    """The panel's doctor polls /metrics every few seconds; its parser lived in the benchmark's module, whose
    import pulled aiohttp in on the panel's event loop at the first poll — in the middle of a sweep, a stall of
    0.3–1.4 s one key waited for (found with py-spy on bench/sweep_keys.py). The poll, in a fresh interpreter
    against a real /metrics on loopback, reads the sums and leaves aiohttp unloaded."""
    import http.server
    import subprocess
    import sys
    import threading

    body = metrics_text(tokens_stream=120, tokens_plain=30, verify=50).encode()

    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    code = (
        "import asyncio, sys, httpx\n"
        "from specdec_tui.loop.doctor import gauges_from\n"
        "async def main():\n"
        "    async with httpx.AsyncClient() as client:\n"
        f"        return await gauges_from(client, 'http://127.0.0.1:{server.server_address[1]}')\n"
        "sums = asyncio.run(main())\n"
        "print(sums['sglang:generation_tokens_total'], 'aiohttp' in sys.modules)\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    finally:
        server.shutdown()
    assert out.stdout.split() == ["150.0", "False"], out.stdout + out.stderr
