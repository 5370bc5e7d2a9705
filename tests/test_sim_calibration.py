"""The seed's curve, measured the way a client measures it, on real simulator processes at steps 1, 2, 3.

The seed's benchmark: one streaming request at temperature 0 with ignore_eos ("produces highly repetitive,
predictable output ... near-100% acceptance", whatever the prompt: the seed says nothing of its prompts);
decode 123 / 186 / 234 tok/s and max_running_requests 26 / 21 / 17. Rates here come from arrival times on the
client's side (wall seconds × the sim's time scale = simulated seconds), never from /sim/ground_truth:
(a) a plain aiohttp client with an ordinary prompt, (b) the project's own benchmark at c=1 on the shipped
`realistic` prompts, (c) the benchmark's acceptance against the server's own counters and the cost model's.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import aiohttp
import orjson
import pytest

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.server_stats import GENERATION_TOKENS, VERIFY_CALLS
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.prometheus_text import parse_metrics
from specdec_tui.core.results import AcceptSource, LevelResult
from specdec_tui.sim.cost_model import Tree, expected_accept_length
from specdec_tui.sim.profiles import SEED as SEED_PROFILE
from tests.test_sim_support import SimProcess, seed_flags

SEED = {1: (123, 26), 2: (186, 21), 3: (234, 17)}
ORDINARY = "Write a short story about a lighthouse keeper who finds a letter in a bottle."
SCALE = 10.0  # the sims run 10× faster than the seed's GPUs; client rates are scaled back by this
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def servers():
    procs = {k: SimProcess([*seed_flags(k), "--enable-metrics", "--time-scale", str(SCALE), "--load-seconds", "2",
                            "--sim-seed", "3"]).start() for k in SEED}
    for p in procs.values():
        p.wait_ready(60)
    yield procs
    for p in procs.values():
        p.stop()


@dataclass
class Stream:
    times: list[float]  # arrival of each content chunk (perf_counter seconds)
    tokens: list[int]  # tokens it carried (from the continuous usage)

    @property
    def decode_tok_s(self) -> float:
        """Tokens after the first chunk over the time from the first chunk to the last, in simulated seconds."""
        return sum(self.tokens[1:]) / ((self.times[-1] - self.times[0]) * SCALE)

    @property
    def tokens_per_chunk(self) -> float:
        return sum(self.tokens[1:]) / (len(self.tokens) - 1)


async def plain_client(url: str) -> Stream:
    """What anyone would write: POST, stamp each SSE event on arrival, read the running usage."""
    body = {"prompt": ORDINARY, "max_tokens": 800, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    out = Stream([], [])
    seen = 0
    async with aiohttp.ClientSession() as s, s.post(url + "/v1/completions", json=body) as resp:
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
                    total = chunk["usage"]["completion_tokens"]
                    out.times.append(now)
                    out.tokens.append(total - seen)
                    seen = total
    assert seen == 800
    return out


async def counters(url: str) -> dict[str, float]:
    async with aiohttp.ClientSession() as s, s.get(url + "/metrics") as r:
        return parse_metrics(await r.text())


async def bench_c1(url: str) -> tuple[LevelResult, float]:
    """The benchmark at c=1 and, read independently around it, the server's own accept length."""
    prof = BenchProfile(concurrency=(1,), requests=4, warmup=0, max_tokens=256, temperature=0.0, ignore_eos=True,
                        prompts="realistic")
    before = await counters(url)
    (level,) = await drive_benchmark(url, prof, lambda _ev: None)
    after = await counters(url)
    server = (after[GENERATION_TOKENS] - before[GENERATION_TOKENS]) / (after[VERIFY_CALLS] - before.get(VERIFY_CALLS, 0))
    return level, server


def trap_accept_length(steps: int) -> float:
    return expected_accept_length(SEED_PROFILE.trap_alpha, Tree(steps, 1, steps + 1))


def within_5pct(measured: float, expected: float) -> bool:
    return abs(measured / expected - 1) <= 0.05


async def test_a_plain_streaming_client_measures_the_seeds_rates(servers):
    streams = dict(zip(SEED, await asyncio.gather(*(plain_client(p.url) for p in servers.values())), strict=True))
    for steps, (seed_rate, seed_mrr) in SEED.items():
        st = streams[steps]
        assert within_5pct(st.decode_tok_s, seed_rate), (steps, st.decode_tok_s)
        expected_len = trap_accept_length(steps)
        assert within_5pct(st.tokens_per_chunk, expected_len), (steps, st.tokens_per_chunk)
        assert f"max_running_requests={seed_mrr}," in servers[steps].wait_line("max_total_num_tokens=")
    r1, r2, r3 = (streams[k].decode_tok_s for k in (1, 2, 3))
    assert 1.40 < r2 / r1 < 1.60 and 1.18 < r3 / r2 < 1.34  # seed: +51 %, +26 %


async def test_b_c_the_benchmark_measures_the_seeds_rates_and_the_servers_acceptance(servers):
    runs = dict(zip(SEED, await asyncio.gather(*(bench_c1(p.url) for p in servers.values())), strict=True))
    for steps, (seed_rate, _) in SEED.items():
        level, server_accept = runs[steps]
        assert level.errors == 0 and level.output_tokens == 4 * 256
        decode = level.per_request_tok_s.p50
        assert decode is not None and within_5pct(decode / SCALE, seed_rate), (steps, decode / SCALE)
        # (c) the level's figure is the server's own, and what the stream shows agrees with it
        assert level.accept_source is AcceptSource.SERVER_COUNTERS
        assert level.accept_length is not None and within_5pct(level.accept_length, server_accept)
        assert level.accept_length_client is not None and within_5pct(level.accept_length_client, server_accept)
        # temperature 0 + ignore_eos is the seed's trap on realistic prompts too: 1.95 / 2.85 / 3.71
        assert within_5pct(server_accept, trap_accept_length(steps)), (steps, server_accept)
