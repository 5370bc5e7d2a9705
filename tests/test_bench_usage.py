"""Issue 36, point 8: the benchmark does not believe a `usage` that contradicts the stream (more than max_tokens,
decreasing, negative, far from the chunks' count): that request is an error, counted and shown."""

from __future__ import annotations

import json

import pytest

from specdec_tui.bench import RunDone, run_benchmark
from specdec_tui.core.config import BenchProfile
from tests.bench_servers import RunningServer, ServerSpec
from tests.test_bench_cli import run_cli

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(("mode", "max_tokens", "words"), [
    ("usage_inflated", 16, "more than the 16 asked"),
    ("usage_decreasing", 16, "went down"),
    ("usage_negative", 16, "negative"),
    ("usage_far", 2000, "2000 completion tokens in 2 chunks"),
])
async def test_a_usage_that_contradicts_the_stream_fails_the_request(mode: str, max_tokens: int, words: str) -> None:
    prof = BenchProfile(concurrency=(2,), requests=4, max_tokens=max_tokens, warmup=0, stall_timeout_s=5.0)
    async with RunningServer(ServerSpec(mode=mode, pattern=(1, 3), delay_s=0.002)) as srv:
        events = [ev async for ev in run_benchmark(srv.base_url, prof)]
    done = events[-1]
    assert isinstance(done, RunDone)
    (lv,) = done.levels
    assert lv.errors == lv.requests == 4 and lv.error_kinds == {"bad_usage": 4}
    assert lv.output_tokens == 0 and lv.output_tok_s == 0
    assert any(words in w for w in lv.warnings), lv.warnings


async def test_an_honest_usage_is_believed() -> None:
    prof = BenchProfile(concurrency=(1,), requests=3, max_tokens=16, warmup=0)
    async with RunningServer(ServerSpec(pattern=(1, 3), delay_s=0.002)) as srv:
        events = [ev async for ev in run_benchmark(srv.base_url, prof)]
    (lv,) = events[-1].levels  # type: ignore[attr-defined]
    assert lv.errors == 0 and lv.output_tokens == 3 * 16


async def test_bench_shows_the_lying_usage_as_errors_in_words() -> None:
    async with RunningServer(ServerSpec(mode="usage_inflated", delay_s=0.002)) as srv:
        code, out, err = await run_cli("--url", srv.base_url, "--json", "--concurrency", "1", "--requests", "10",
                                       "--max-tokens", "16")
    level = json.loads(out.splitlines()[0])
    assert level["errors"] == 10 and level["error_kinds"] == {"bad_usage": 10}
    assert level["output_tokens"] == 0
    assert any("usage contradicts its stream" in w for w in level["warnings"])
    assert code != 0 and "token counts (usage) contradict its streams" in err
