"""The seed's story, measured end to end on real simulator processes.

One streaming request per server at steps 1, 2, 3 (the seed's trap: temperature 0, ignore_eos, repetitive prompt).
Rates are the server's simulated rates (/sim/ground_truth), cross-checked against the stream this test reads.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.test_sim_support import (
    TRAP_PROMPT,
    SimProcess,
    get_json,
    seed_flags,
    stream_completion,
)

SEED = {1: (123, 26), 2: (186, 21), 3: (234, 17)}


@pytest.fixture(scope="module")
def servers():
    procs = {k: SimProcess([*seed_flags(k), "--time-scale", "25", "--load-seconds", "2", "--sim-seed", "3"]).start()
             for k in SEED}
    yield procs
    for p in procs.values():
        p.stop()


async def _measure(p: SimProcess) -> tuple[float, int, int]:
    body = {"prompt": TRAP_PROMPT, "max_tokens": 800, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    async with aiohttp.ClientSession() as s:
        res = await stream_completion(s, p.url, body)
        truth = await get_json(s, p.url + "/sim/ground_truth")
    rid = res.chunks[0]["id"]
    content_chunks = sum(1 for c in res.chunks if c["choices"])
    return truth["requests"][rid]["decode_tok_s"], res.final_usage["completion_tokens"], content_chunks


async def test_steps_1_2_3_reproduce_the_seeds_rates_and_capacity(servers):
    for p in servers.values():
        p.wait_ready()
    measured = dict(zip(servers, await asyncio.gather(*(_measure(p) for p in servers.values())), strict=True))
    for steps, (seed_rate, seed_mrr) in SEED.items():
        rate, tokens, chunks = measured[steps]
        assert tokens == 800
        assert abs(rate / seed_rate - 1) <= 0.05, (steps, rate)
        assert f"max_running_requests={seed_mrr}," in servers[steps].wait_line("max_total_num_tokens=")
        assert chunks < tokens / (1 + 0.8 * steps)  # multi-token chunks, more tokens per chunk with more steps
    r1, r2, r3 = (measured[k][0] for k in (1, 2, 3))
    assert 1.40 < r2 / r1 < 1.60 and 1.18 < r3 / r2 < 1.34  # seed: +51 %, +26 %
