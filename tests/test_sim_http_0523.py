"""The simulator's HTTP side has SGLang 0.5.23's shapes, checked against the real simulator process on loopback.

upstream: python/sglang/srt/entrypoints/http_server.py (/generate, /v1/models/{model}, /server_info, /model_info,
/health, /health_generate, the warm-up), entrypoints/openai/sse_utils.py and protocol.py (the chunks),
observability/metrics_collector.py (the metric names), managers/tokenizer_manager.py (meta_info).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import aiohttp
import orjson
import pytest

from specdec_tui.core.prometheus_text import parse_metrics
from specdec_tui.loop.health import HealthState, watch_health
from tests.test_sim_support import SEED_MODEL, SimProcess, get_json, seed_flags

FAST = ["--time-scale", "20", "--load-seconds", "1"]
# every sglang:* name the simulator exports, each defined in 0.5.23's metrics_collector.py
EXPORTED_0_5_23 = {
    "sglang:num_running_reqs", "sglang:num_used_tokens", "sglang:token_usage", "sglang:gen_throughput",
    "sglang:num_queue_reqs", "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:spec_num_steps",
    "sglang:spec_num_draft_tokens", "sglang:max_total_num_tokens", "sglang:prompt_tokens_total",
    "sglang:generation_tokens_total", "sglang:spec_verify_calls_total", "sglang:num_requests_total",
    "sglang:num_aborted_requests_total",
}


@pytest.fixture(scope="module")
def server() -> Iterator[SimProcess]:
    p = SimProcess([*seed_flags(3), *FAST, "--enable-metrics"]).start()
    p.wait_ready()
    try:
        yield p
    finally:
        p.stop()


async def _events(resp: aiohttp.ClientResponse) -> list[bytes]:
    body = await resp.read()
    events = [e for e in body.split(b"\n\n") if e]
    assert all(e.startswith(b"data: ") for e in events)
    return [e.removeprefix(b"data: ") for e in events]


async def test_generate_answers_whole_and_streamed_as_the_native_api_does(server: SimProcess) -> None:
    params = {"max_new_tokens": 24, "temperature": 0, "ignore_eos": True}
    async with aiohttp.ClientSession() as s:
        async with s.post(server.url + "/generate", json={"text": "Tell me a story", "sampling_params": params}) as r:
            assert r.status == 200
            whole = orjson.loads(await r.read())
        async with s.put(server.url + "/generate",
                         json={"text": "Tell me a story", "sampling_params": params, "stream": True}) as r:
            assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
            events = await _events(r)
        async with s.post(server.url + "/generate", json={"sampling_params": params}) as r:
            assert r.status == 400 and "text or input_ids" in (await r.json())["error"]["message"]
    assert set(whole) == {"text", "output_ids", "meta_info"}
    meta = whole["meta_info"]
    assert meta["finish_reason"] == {"type": "length", "length": 24} and meta["completion_tokens"] == 24
    assert len(whole["output_ids"]) == 24 and whole["text"] and meta["prompt_tokens"] > 0
    assert meta["spec_verify_ct"] > 0 and meta["spec_accept_length"] == pytest.approx(24 / meta["spec_verify_ct"])
    assert meta["e2e_latency"] > 0 and meta["spec_num_proposed_drafts"] == meta["spec_verify_ct"] * 3
    assert events[-1] == b"[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    assert len(chunks) > 2  # one event per scheduler step
    for before, after in zip(chunks, chunks[1:], strict=False):  # the text and ids so far, each time
        assert after["text"].startswith(before["text"]) and after["output_ids"][: len(before["output_ids"])] == (
            before["output_ids"])
        assert before["meta_info"]["finish_reason"] is None and "e2e_latency" not in before["meta_info"]
    assert chunks[-1]["meta_info"]["finish_reason"] == {"type": "length", "length": 24}
    assert len(chunks[-1]["output_ids"]) == chunks[-1]["meta_info"]["completion_tokens"] == 24


async def test_a_model_is_retrieved_by_name_and_an_unknown_one_is_404(server: SimProcess) -> None:
    async with aiohttp.ClientSession() as s:
        card = await get_json(s, f"{server.url}/v1/models/{SEED_MODEL}")  # the name holds a slash
        async with s.get(server.url + "/v1/models/other-model") as r:
            assert r.status == 404
            missing = await r.json()
    assert card == {"id": SEED_MODEL, "object": "model", "created": card["created"], "owned_by": "sglang",
                    "root": SEED_MODEL, "parent": None, "max_model_len": 262144}
    assert missing["error"]["code"] == "model_not_found" and "'other-model' does not exist" in missing["error"]["message"]


async def test_server_info_and_model_info_carry_0_5_23s_fields(server: SimProcess) -> None:
    async with aiohttp.ClientSession() as s:
        info = await get_json(s, server.url + "/server_info")
        model = await get_json(s, server.url + "/model_info")
    assert (info["version"], info["frontend"]) == ("0.5.23", "python")
    assert "--speculative-num-steps 3" in info["launch_command"] and "--enable-metrics" in info["launch_command"]
    assert set(info["startup_time"]) == {"load_weight", "kv_cache_allocation", "scheduler_e2e", "cuda_graph"}
    assert info["startup_time"]["cuda_graph"]["target_verify"] > 0
    assert info["internal_states"][0]["avg_spec_accept_length"] > 1.0  # the warm-up verified drafts
    assert model["served_model_name"] == SEED_MODEL and model["architectures"] and model["is_generation"] is True


async def test_chat_chunks_echo_the_model_and_omit_what_the_real_server_omits(server: SimProcess) -> None:
    body = {"model": "my-alias", "messages": [{"role": "user", "content": "Tell me about rivers."}], "max_tokens": 12,
            "temperature": 0, "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    async with aiohttp.ClientSession() as s, s.post(server.url + "/v1/chat/completions", json=body) as r:
        events = await _events(r)
    assert events[-1] == b"[DONE]"
    chunks = [orjson.loads(e) for e in events[:-1]]
    assert {c["model"] for c in chunks} == {"my-alias"}
    *stream, last = chunks
    assert all("usage" not in c for c in stream)  # msgspec's StreamChunk drops a None usage: no `"usage": null`
    assert stream[0]["choices"][0]["delta"] == {"reasoning_content": None, "role": "assistant", "content": ""}
    content = stream[1:-1]
    assert content and all(set(c["choices"][0]["delta"]) == {"reasoning_content", "content"} for c in content)
    assert all(c["choices"][0]["finish_reason"] is None for c in content)
    finish = stream[-1]["choices"][0]
    assert finish["delta"] == {"reasoning_content": None} and finish["finish_reason"] == "length"
    assert last["choices"] == [] and last["usage"]["completion_tokens"] == 12
    assert last["usage"]["completion_tokens_details"] is None  # the pydantic usage chunk writes its nulls


async def test_completion_chunks_write_usage_null_and_the_final_usage_without_nulls(server: SimProcess) -> None:
    body = {"prompt": "Once upon a time", "max_tokens": 10, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    async with aiohttp.ClientSession() as s, s.post(server.url + "/v1/completions", json=body) as r:
        chunks = [orjson.loads(e) for e in (await _events(r))[:-1]]
    *stream, last = chunks
    assert all(c["usage"] is None and c["model"] == "default" for c in stream)
    assert stream[-1]["choices"][0]["finish_reason"] == "length"  # on the last text chunk itself
    assert last["choices"] == [] and None not in last["usage"].values() and last["usage"]["completion_tokens"] == 10


async def test_metrics_are_0_5_23s_and_health_probes_move_no_counter(server: SimProcess) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.get(server.url + "/metrics") as r:
            before_text = await r.text()
        for path in ("/health", "/health_generate", "/health_generate", "/ready"):
            async with s.get(server.url + path) as r:
                assert r.status == 200
        async with s.get(server.url + "/metrics") as r:
            after = parse_metrics(await r.text())
    before = parse_metrics(before_text)
    names = {line.split("{")[0].split(" ")[0] for line in before_text.splitlines() if line.startswith("sglang:")}
    assert names <= EXPORTED_0_5_23 and "sglang:max_running_requests" not in names
    for counter in ("sglang:generation_tokens_total", "sglang:prompt_tokens_total", "sglang:num_requests_total",
                    "sglang:spec_verify_calls_total"):
        assert after.get(counter) == before.get(counter), counter


async def test_the_warm_up_is_long_enough_for_the_panel_to_say_warming_up() -> None:
    """At time scale 1 the warm-up waits its second and generates its 8 tokens: /health answers 503 from the
    moment the port opens for at least half a second, and the panel's own probe reports WARMING_UP."""
    p = SimProcess([*seed_flags(1), "--time-scale", "1", "--load-seconds", "0.3"]).start()
    try:
        p.wait_line("Uvicorn running on")
        seen: list[HealthState] = []
        first_503: float | None = None
        async with aiohttp.ClientSession() as s:
            async with s.get(p.url + "/health") as r:
                assert r.status == 503
                first_503 = time.monotonic()
            async for snap in watch_health(None, p.url, fast_interval=0.05):
                seen.append(snap.state)
                if snap.state is HealthState.READY:
                    break
        ready_at = time.monotonic()
        assert HealthState.WARMING_UP in seen and seen[-1] is HealthState.READY
        assert ready_at - first_503 >= 0.5
        out = p.output()
        assert out.index('"GET /model_info HTTP/1.1" 200') < out.index('"POST /generate HTTP/1.1" 200') < out.index(
            "The server is fired up and ready to roll!")
    finally:
        p.stop()


async def test_the_benchmark_shows_what_bench_serving_would_print_beside_the_levels_own_figure(
        server: SimProcess) -> None:
    """The real engine against the real simulator: each level carries /server_info's avg_spec_accept_length as
    read after it, the number SGLang's bench_serving prints as "Accept length" (the server's mean since it started,
    the warm-up and earlier levels in it), next to the level's own figure from the counters."""
    from specdec_tui.bench.drive import drive_benchmark
    from specdec_tui.core.config import BenchProfile

    profile = BenchProfile(concurrency=(1, 2), requests=2, warmup=0, max_tokens=40, temperature=0.0, ignore_eos=True)
    levels = await drive_benchmark(server.url, profile, lambda _event: None)
    async with aiohttp.ClientSession() as s:
        info = await get_json(s, server.url + "/server_info")
    lifetime = info["internal_states"][0]["avg_spec_accept_length"]
    assert [lv.server_avg_accept_length is not None for lv in levels] == [True, True]
    assert levels[-1].server_avg_accept_length == pytest.approx(lifetime)  # nothing ran since the last level
    assert all(lv.accept_length_source == "server counters" and lv.accept_length_server for lv in levels)


async def test_the_benchmark_reads_0_5_23s_chat_stream_whole(server: SimProcess) -> None:
    """Chat chunks without a usage key and the finish reason in a chunk of its own still give every token and
    the finish reason to the benchmark's client."""
    from specdec_tui.bench.drive import drive_benchmark
    from specdec_tui.core.config import BenchProfile

    profile = BenchProfile(endpoint="chat", concurrency=(1,), requests=2, warmup=0, max_tokens=30, temperature=0.0,
                           ignore_eos=True)
    (level,) = await drive_benchmark(server.url, profile, lambda _event: None)
    assert (level.requests, level.errors, level.output_tokens) == (2, 0, 60)
    assert level.finish_reasons == {"length": 2} and level.accept_length_server
