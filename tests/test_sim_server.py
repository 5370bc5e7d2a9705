"""The simulator as a real process on 127.0.0.1: readiness, OpenAI streaming, info, metrics, failures, SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import socket
from itertools import pairwise

import aiohttp
import orjson
import pytest

from specdec_tui.core.sglang.parse import parse_line
from tests.test_sim_support import (
    TRAP_PROMPT,
    get_json,
    seed_flags,
    stream_completion,
)

FAST = ["--time-scale", "20", "--load-seconds", "2"]



def _connect(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


async def test_port_refuses_while_loading_then_health_is_200(sim):
    p = sim(*seed_flags(2), "--time-scale", "1", "--load-seconds", "1.5")
    p.wait_line("Load weight begin.")
    with pytest.raises(ConnectionRefusedError):
        _connect(p.port)
    p.wait_ready()
    async with aiohttp.ClientSession() as s:
        async with s.get(p.url + "/health") as r:
            assert r.status == 200
        async with s.get(p.url + "/health_generate") as r:
            assert r.status == 200
    out = p.output()
    # 0.5.23's capture lines name the graph (`Capture target verify CUDA graph end.`), not `Capture cuda graph end.`
    assert (out.index("Load weight end.") < out.index("KV Cache is allocated.")
            < out.index("Capture target verify CUDA graph end.") < out.index("Capture draft extend CUDA graph end."))
    assert "max_running_requests=21" in p.wait_line("max_total_num_tokens=")
    assert " TP3] Load weight begin. avail mem=" in out


async def test_streaming_chunks_carry_whole_steps_and_match_ground_truth(sim):
    p = sim(*seed_flags(3), *FAST)
    p.wait_ready()
    body = {"model": "x", "prompt": TRAP_PROMPT, "max_tokens": 200, "temperature": 0, "ignore_eos": True,
            "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    async with aiohttp.ClientSession() as s:
        res = await stream_completion(s, p.url, body)
        truth = await get_json(s, p.url + "/sim/ground_truth")
    assert res.done and res.finish_reason == "length"
    content = [c for c in res.chunks if c["choices"]]
    per_chunk = [c["usage"]["completion_tokens"] for c in content]
    assert per_chunk == sorted(per_chunk) and per_chunk[-1] == 200  # cumulative
    steps = [b - a for a, b in pairwise([0, *per_chunk])]
    assert max(steps) == 4 and sum(steps) / len(steps) > 2.5  # several tokens per chunk at steps 3
    rid = content[0]["id"]
    gt = truth["requests"][rid]
    assert gt["completion_tokens"] == res.final_usage["completion_tokens"] == 200
    assert gt["chunks"] == len(content)
    assert res.final_usage["prompt_tokens"] == gt["prompt_tokens"]
    # degenerate text under the trap: the tail is a short loop
    tail = res.text.split()[-40:]
    assert len(set(tail)) <= 10


async def test_chat_stream_natural_stop_and_non_streaming(sim):
    p = sim(*seed_flags(1), *FAST, "--served-model-name", "qwen")
    p.wait_ready()
    async with aiohttp.ClientSession() as s:
        chat = await stream_completion(
            s, p.url, {"messages": [{"role": "user", "content": "Tell me about rivers."}], "max_tokens": 2000,
                       "temperature": 0.7, "stream": True}, chat=True)
        assert chat.chunks[0]["choices"][0]["delta"]["role"] == "assistant"
        assert chat.chunks[0]["object"] == "chat.completion.chunk"
        assert chat.finish_reason == "stop" and chat.final_usage is None
        async with s.post(p.url + "/v1/completions", json={"prompt": "hi", "max_tokens": 7}) as r:
            full = orjson.loads(await r.read())
        # 0.5.23 echoes the request's `model`, "default" when it names none (openai/protocol.py DEFAULT_MODEL_NAME)
        assert full["object"] == "text_completion" and full["model"] == "default"
        assert full["usage"]["completion_tokens"] == 7 and full["choices"][0]["finish_reason"] == "length"
        models = await get_json(s, p.url + "/v1/models")
        assert models["data"][0]["id"] == "qwen" and models["data"][0]["max_model_len"] == 262144
    assert '"POST /v1/chat/completions HTTP/1.1" 200 OK' in p.output()


async def test_server_info_metrics_and_api_key(sim):
    p = sim(*seed_flags(2), *FAST, "--enable-metrics", "--api-key", "sekret", "--decode-log-interval", "5")
    p.wait_ready()
    auth = {"Authorization": "Bearer sekret"}
    async with aiohttp.ClientSession() as s:
        async with s.post(p.url + "/v1/completions", json={"prompt": "x", "max_tokens": 3}) as r:
            assert r.status == 401 and orjson.loads(await r.read()) == {"error": "Unauthorized"}
        async with aiohttp.ClientSession(headers=auth) as sa:
            await stream_completion(sa, p.url, {"prompt": TRAP_PROMPT, "max_tokens": 150, "temperature": 0,
                                                "ignore_eos": True, "stream": True})
            info = await get_json(sa, p.url + "/get_server_info")
        async with s.get(p.url + "/metrics") as r:
            metrics = await r.text()
    assert info["speculative_algorithm"] == "EAGLE" and info["speculative_num_steps"] == 2
    state = info["internal_states"][0]
    assert state["effective_max_running_requests_per_dp"] == 21
    assert 2.0 < state["avg_spec_accept_length"] <= 3.0
    assert info["max_total_num_tokens"] > 0 and info["version"]
    # upstream's tokenizer counters: labels sorted as prometheus_client writes them, the warm-up not streamed
    # upstream: python/sglang/srt/observability/metrics_collector.py (TokenizerMetricsCollector)
    tok = 'engine_type="unified",is_streaming="{}",model_name="Qwen/Qwen3.5-122B-A10B"'
    assert f"sglang:generation_tokens_total{{{tok.format('true')}}} 150.0" in metrics
    # the warm-up: 0.5.23's warm-up /generate asks max_new_tokens 8 (http_server.py `_execute_server_warmup`)
    assert f"sglang:generation_tokens_total{{{tok.format('false')}}} 8.0" in metrics
    assert "# TYPE sglang:spec_verify_calls_total counter" in metrics
    for name in ("spec_accept_length", "gen_throughput", "num_running_reqs", "num_queue_reqs"):
        assert f"sglang:{name}{{" in metrics
    # Qwen3.5 is hybrid: its two pools, as upstream's pool_stats_observer.py `get_decode_usage_msg_parts` logs them
    decode = p.wait_line("Decode batch, #running-req: 1, #full token: ")  # 0.5.23 logs no #cached-token here
    assert ", mamba num: 4, mamba usage: " in decode  # one request, 3 draft tokens: 1 state slot + 3 for rollback
    assert ", accept len: " in decode and ", accept rate: " in decode and decode.endswith("#queue-req: 0")
    # upstream's accept rate (metrics_reporter.py): correct drafts / drafts, (accept len - 1) / (3 draft tokens - 1)
    records = [parse_line(line) for line in p.lines if "Decode batch, " in line]
    assert any(r.accept_len < 3.0 for r in records)  # some drafts rejected, else both formulas give 1.00
    for r in records:
        assert r.accept_rate == pytest.approx((r.accept_len - 1) / 2, abs=0.006)


async def test_requests_beyond_max_running_queue(sim):
    p = sim(*seed_flags(3), *FAST, "--decode-log-interval", "3")
    p.wait_ready()
    body = {"prompt": TRAP_PROMPT, "max_tokens": 60, "temperature": 0, "ignore_eos": True, "stream": True}
    async with aiohttp.ClientSession() as s:
        results = await asyncio.gather(*(stream_completion(s, p.url, body) for _ in range(20)))
    assert all(r.done for r in results)
    p.wait_line("Decode batch, #running-req: 17,")
    decode = [ln for ln in p.lines if "Decode batch, " in ln]
    running = [int(ln.split("#running-req: ")[1].split(",")[0]) for ln in decode]
    queued = [int(ln.rsplit("#queue-req: ", 1)[1]) for ln in decode]
    assert max(running) == 17
    assert any(q > 0 for r, q in zip(running, queued, strict=True) if r == 17)


@pytest.mark.parametrize(
    "extra, needles",
    [
        (["--mem-fraction-static", "0.6"],  # the weights leave nothing: 0.5.23 names the minimum viable fraction
         ["Scheduler hit an exception: Traceback (most recent call last):",
          "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.6. "
          "Raise --mem-fraction-static above 0.669 (minimum viable = 1 - available/pre = 0.6680)."]),
        (["--mem-fraction-static", "0.675"],  # room for the weights, none left for KV beside the state pool
         ["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."]),
        (["--mem-fraction-static", "0.94"],  # the static pool fits, the CUDA graphs outside it do not
         ["Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate",
          "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)"]),
        (["--sim-fail", "not-enough-memory"], ["Received sigquit from a child process."]),
    ],
)
def test_failed_starts_exit_1_with_sglangs_text(sim, extra, needles):
    p = sim(*seed_flags(3), *FAST, *extra)
    assert p.wait_exit() == 1
    out = p.output()
    for needle in needles:
        assert needle in out
    assert "fired up" not in out


def test_sigterm_exits_cleanly_when_ready_and_while_loading(sim):
    ready = sim(*seed_flags(1), *FAST)
    loading = sim(*seed_flags(1), "--load-seconds", "30")
    ready.wait_ready()
    loading.wait_line("Load weight begin.")
    for p in (ready, loading):
        p.proc.send_signal(signal.SIGTERM)
    assert ready.wait_exit() == 0 and loading.wait_exit() == 0
    assert "INFO:     Application shutdown complete." in ready.output()
