"""The demo's promise, measured in real time: single-request decode tok/s and max_running_requests at steps 1, 2, 3
as a plain streaming client reads them, beside the seed's figures (the anchor: 123 / 186 / 234 tok/s, 26 / 21 / 17),
and each server's acceptance from its own counters (Δgeneration_tokens / Δspec_verify_calls).

    python bench/seed_curve.py                  # time scale 1 (real time), 800 tokens per request
Target: every rate within 5 % of the seed's, with an ordinary prompt at temperature 0 + ignore_eos.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import time

import aiohttp
import orjson
from sim_ready import free_port, wait_healthy

SEED = {1: (123.0, 26), 2: (186.0, 21), 3: (234.0, 17)}
# An ordinary prompt: the seed's trap is its benchmark's temperature 0 + ignore_eos ("produces highly repetitive,
# predictable output ... near-100% acceptance"), whatever the prompt; the seed says nothing of its prompts.
PROMPT = "Write a short story about a lighthouse keeper who finds a letter in a bottle."


def start(steps: int, port: int) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "specdec_tui.sim", "--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4",
            "--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(steps), "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", str(steps + 1), "--mem-fraction-static", "0.85", "--enable-metrics",
            "--load-seconds", "1", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


async def counters(session: aiohttp.ClientSession, url: str) -> tuple[float, float]:
    async with session.get(url + "/metrics") as resp:
        text = await resp.text()

    def total(name: str) -> float:
        return sum(float(m.group(1)) for m in re.finditer(rf"^sglang:{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))

    return total("generation_tokens_total"), total("spec_verify_calls_total")


async def measure(url: str, tokens: int) -> tuple[float, float]:
    async with aiohttp.ClientSession() as session:
        await wait_healthy(session, url)
        gen0, ver0 = await counters(session, url)
        body = {"prompt": PROMPT, "max_tokens": tokens, "temperature": 0, "ignore_eos": True, "stream": True,
                "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        arrivals: list[tuple[float, int]] = []
        async with session.post(url + "/v1/completions", json=body) as resp:
            async for raw in resp.content:
                line = raw.strip()
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                chunk = orjson.loads(line[6:])
                if chunk.get("choices") and chunk.get("usage"):
                    arrivals.append((time.perf_counter(), int(chunk["usage"]["completion_tokens"])))
        gen1, ver1 = await counters(session, url)
    decoded = arrivals[-1][1] - arrivals[0][1]
    rate = decoded / (arrivals[-1][0] - arrivals[0][0])
    return rate, (gen1 - gen0) / (ver1 - ver0) if ver1 > ver0 else float("nan")


async def main_async(tokens: int) -> int:
    ports = {steps: free_port() for steps in SEED}
    procs = {steps: start(steps, port) for steps, port in ports.items()}
    try:
        results = await asyncio.gather(*(measure(f"http://127.0.0.1:{ports[s]}", tokens) for s in SEED))
    finally:
        for proc in procs.values():
            proc.terminate()
    ok = True
    for (steps, (seed_rate, seed_mrr)), (rate, accept) in zip(SEED.items(), results, strict=True):
        out = procs[steps].communicate(timeout=15)[0]
        found = re.search(r"max_total_num_tokens=\d+, .*max_running_requests=(\d+),", out)  # the start-up summary
        mrr = int(found.group(1)) if found else None
        off = rate / seed_rate - 1
        ok = ok and abs(off) <= 0.05 and mrr == seed_mrr
        print(f"steps {steps}: {rate:6.1f} tok/s (seed {seed_rate:.0f}, {off:+.1%}), max_running_requests {mrr} "
              f"(seed {seed_mrr}), accept length by the server's counters {accept:.2f}")
    print("target (within 5 % of the seed, the same capacity):", "met" if ok else "NOT met")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=800)
    return asyncio.run(main_async(parser.parse_args().tokens))


if __name__ == "__main__":
    sys.exit(main())
