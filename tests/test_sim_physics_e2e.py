"""The simulated server's physics through a plain streaming client (aiohttp, arrival times on the client's side,
never the sim's own claims): a profile's speedup at two batch sizes, an eager-fallback run, a start that fails for
memory, a tree that verifies only its root, and adaptive speculation switching by the running batch."""

from __future__ import annotations

import asyncio
import re
import time

import aiohttp
import orjson
import pytest

from specdec_tui.sim.profiles import DEEPSEEK
from tests.test_sim_support import seed_flags

pytestmark = pytest.mark.timeout(180)
CHAT = "What are three good neighbourhoods to stay in for a weekend in Lisbon, and why?"
DEEPSEEK_MTP = ["--model-path", DEEPSEEK.model_path, "--tp", "8", "--trust-remote-code", "--speculative-algorithm",
                "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", "2"]



async def decode_rate(session: aiohttp.ClientSession, url: str, body: dict, scale: float) -> tuple[float, float]:
    """(decode tok/s in simulated seconds, tokens per chunk) of one stream, from chunk arrival times."""
    stamps: list[tuple[float, int]] = []
    async with session.post(url + "/v1/completions", json={**body, "stream": True, "stream_options": {
            "include_usage": True, "continuous_usage_stats": True}}) as resp:
        assert resp.status == 200
        buf = b""
        async for data in resp.content.iter_any():
            now = time.perf_counter()
            buf += data
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                if event == b"data: [DONE]":
                    continue
                chunk = orjson.loads(event.removeprefix(b"data: "))
                if chunk["choices"]:
                    stamps.append((now, chunk["usage"]["completion_tokens"]))
    tokens = stamps[-1][1] - stamps[0][1]
    return tokens / ((stamps[-1][0] - stamps[0][0]) * scale), tokens / (len(stamps) - 1)


async def mean_rate(url: str, concurrency: int, body: dict, scale: float, rounds: int = 1) -> float:
    rates: list[float] = []
    async with aiohttp.ClientSession() as session:
        for _ in range(rounds):
            got = await asyncio.gather(*(decode_rate(session, url, body, scale) for _ in range(concurrency)))
            rates.extend(r for r, _ in got)
    return sum(rates) / len(rates)


def test_deepseek_mtp_speedup_at_batch_1_and_32(sim):
    """SGLang's DeepSeek docs: 1.8x at batch 1, 1.5x at batch 32 (H200 TP8). 58 tokens each: below the sim's
    shortest natural answer, so every stream is as long as asked and the batch stays whole."""
    scale = 4.0
    flags = ["--time-scale", str(scale), "--load-seconds", "1"]
    spec, off = sim(*DEEPSEEK_MTP, *flags), sim("--model-path", DEEPSEEK.model_path, "--tp", "8", *flags)
    spec.wait_ready(60)
    off.wait_ready(60)
    body = {"prompt": CHAT, "max_tokens": 58, "temperature": 0}
    ratio = {b: asyncio.run(mean_rate(spec.url, b, body, scale, rounds=6 if b == 1 else 1))
             / asyncio.run(mean_rate(off.url, b, body, scale, rounds=6 if b == 1 else 1)) for b in (1, 32)}
    assert ratio[1] == pytest.approx(1.8, rel=0.08), ratio
    assert ratio[32] == pytest.approx(1.5, rel=0.08), ratio
    assert "cuda graph: True" in spec.wait_line("Decode batch")


def test_a_batch_above_the_captured_graphs_runs_eagerly_and_says_so(sim):
    scale = 10.0
    flags = [*seed_flags(1), "--time-scale", str(scale), "--load-seconds", "1", "--decode-log-interval", "5"]
    graphed, eager = sim(*flags), sim(*flags, "--cuda-graph-max-bs-decode", "1")
    graphed.wait_ready(60)
    eager.wait_ready(60)
    assert "CUDA graph end. bs=[1]," in eager.output()  # 0.5.23 names the captured sizes in the end line
    body = {"prompt": CHAT, "max_tokens": 58, "temperature": 0}
    fast = asyncio.run(mean_rate(graphed.url, 2, body, scale))
    slow = asyncio.run(mean_rate(eager.url, 2, body, scale))
    assert fast / slow > 2.5, (fast, slow)
    assert "cuda graph: False" in eager.wait_line("Decode batch, #running-req: 2")
    assert "cuda graph: True" in graphed.wait_line("Decode batch, #running-req: 2")


def test_a_start_that_fails_for_memory_names_the_minimum_fraction(sim):
    p = sim("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--mem-fraction-static", "0.15",
            "--time-scale", "20", "--load-seconds", "1")
    assert p.wait_exit(60) == 1
    out = p.output()
    assert re.search(r"ValueError: Loaded weights leave no GPU memory for the KV cache under "
                     r"--mem-fraction-static=0\.15\. Raise --mem-fraction-static above 0\.2\d\d "
                     r"\(minimum viable = 1 - available/pre = 0\.2\d{3}\)", out), out

    async def refused() -> bool:
        try:
            async with aiohttp.ClientSession() as s, s.get(p.url + "/health"):
                return False
        except aiohttp.ClientConnectionError:
            return True

    assert asyncio.run(refused())


def test_only_the_root_verified_streams_one_token_a_round_and_the_log_agrees(sim):
    # the command line: steps 4, topk 2, draft tokens 1
    p = sim("--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--speculative-algorithm", "NEXTN",
            "--speculative-num-steps", "4", "--speculative-eagle-topk", "2", "--speculative-num-draft-tokens", "1",
            "--time-scale", "20", "--load-seconds", "1", "--decode-log-interval", "5", "--enable-metrics")
    p.wait_ready(60)
    body = {"prompt": CHAT, "max_tokens": 40, "temperature": 0, "ignore_eos": True}
    async def run() -> float:
        async with aiohttp.ClientSession() as session:
            return (await decode_rate(session, p.url, body, 20.0))[1]
    assert asyncio.run(run()) == 1.0
    assert "accept len: 1.00, accept rate: 0.00" in p.wait_line("Decode batch")


def test_adaptive_speculation_switches_steps_by_the_running_batch(sim):
    p = sim("--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--speculative-algorithm", "EAGLE",
            "--speculative-adaptive", "--time-scale", "20", "--load-seconds", "1")
    p.wait_ready(60)
    assert "AdaptiveSpeculativeParams initialized: steps=3, candidate_steps=[0, 1, 3, 5, 7]" in p.output()
    trap = {"prompt": CHAT, "max_tokens": 400, "temperature": 0, "ignore_eos": True}
    asyncio.run(mean_rate(p.url, 1, trap, 20.0))  # alone, near-100 % acceptance: the batch-1 tier steps up
    assert "Adaptive spec params updated: steps 3 -> 5" in p.wait_line("Adaptive spec params updated")
    asyncio.run(mean_rate(p.url, 12, {**trap, "max_tokens": 60}, 20.0))  # 12 running: the batch-8 tier's steps 3
    assert re.search(r"Switch adaptive runtime state: steps [57] -> 3, draft_tokens [68] -> 4", p.output()), p.output()


def test_an_unknown_model_gets_the_closest_profile_and_says_so(sim):
    p = sim("--model-path", "some-org/Mystery-7B-Instruct", "--speculative-algorithm", "EAGLE3",
            "--time-scale", "20", "--load-seconds", "1")
    p.wait_ready(60)
    note = p.wait_line("no profile for")
    assert ("no profile for 'some-org/Mystery-7B-Instruct'; simulating it as meta-llama/Llama-3.1-8B-Instruct "
            "(tp 1, NVIDIA H100 80GB HBM3), the closest profile, scaled to 7B parameters") in note
    # the closest profile's architecture decides upstream's automatic tree: a LlamaForCausalLM's (5, 4, 8)
    assert ", type=LlamaForCausalLM, " in p.output()  # Load weight end. elapsed=…, type=…
    summary = p.wait_line("max_total_num_tokens=")
    assert "max_running_requests=48," in summary


def test_a_trees_streamed_tokens_log_and_counters_agree(sim):
    """Llama-3.1-8B with EAGLE-3 on upstream's automatic tree (5, 4, 8), chat at temperature 0: tokens a chunk
    carries, the server's counters and its decode line tell the same accept length (rate = (len-1)/(8-1))."""
    p = sim("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
            "--enable-metrics", "--time-scale", "10", "--load-seconds", "1", "--decode-log-interval", "10")
    p.wait_ready(60)
    body = {"prompt": CHAT, "max_tokens": 58, "temperature": 0}

    async def run() -> tuple[list[float], str, str]:
        async with aiohttp.ClientSession() as session:
            async with session.get(p.url + "/metrics") as r:
                before = await r.text()
            got = await asyncio.gather(*(decode_rate(session, p.url, body, 10.0) for _ in range(8)))
            async with session.get(p.url + "/metrics") as r:
                after = await r.text()
        return [per_chunk for _, per_chunk in got], before, after

    per_chunk, before, after = asyncio.run(run())

    def total(text: str, name: str) -> float:
        return sum(float(v) for v in re.findall(rf"^sglang:{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))

    server = ((total(after, "generation_tokens_total") - total(before, "generation_tokens_total"))
              / (total(after, "spec_verify_calls_total") - total(before, "spec_verify_calls_total")))
    streamed = sum(per_chunk) / len(per_chunk)
    assert 2.5 < streamed < 4.5 and streamed <= 8
    assert server == pytest.approx(streamed, rel=0.08)  # the counters also count each request's prefill token
    line = p.wait_line("accept len:")
    length, rate = (float(x) for x in re.search(r"accept len: ([\d.]+), accept rate: ([\d.]+)", line).groups())
    assert rate == pytest.approx((length - 1) / 7, abs=0.006)
    assert length == pytest.approx(streamed, rel=0.15)
