"""Input lengths in tokens (issue 33): the simulator serves SGLang 0.5.23's `/v1/tokenize` with a tokenizer that is
not one token a word, the bench measures the workload's tokens a word there once per host and builds prompts to
the requested token lengths — checked against what the server counted for each request (`usage.prompt_tokens`,
kept per request in the simulator's ground truth) — and a server without the endpoint (404) leaves the lengths in
words, with the reason in the level's warnings and the trial's workload facts."""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

import httpx
import pytest

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.provenance import provenance
from specdec_tui.core.session import Trial
from tests.test_sim_support import SimProcess, seed_flags
from tests.truth_server import TruthServer

pytestmark = pytest.mark.timeout(120)

PROFILE = BenchProfile(workload="chat", input_len="fixed:300", max_tokens=4, ignore_eos=True, concurrency=(4,),
                       requests=24, warmup=0, seed=5)


async def _run(url: str, profile: BenchProfile) -> RunDone:
    events: list[BenchEvent] = []
    await drive_benchmark(url, profile, events.append)
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None, done
    return done


async def test_requested_input_lengths_land_in_tokens_on_the_server() -> None:
    p = SimProcess([*seed_flags(3), "--time-scale", "20", "--load-seconds", "1"]).start()
    try:
        p.wait_ready()
        async with httpx.AsyncClient(timeout=10.0) as client:
            # the endpoint as SGLang 0.5.23 answers it, and the same count a completion reports as prompt_tokens
            text = "speculative decoding verifies several drafted tokens in one forward pass"
            tok = (await client.post(f"{p.url}/v1/tokenize", json={"prompt": text})).json()
            assert set(tok) == {"tokens", "count", "max_model_len"} and tok["count"] == len(tok["tokens"])
            assert tok["count"] != len(text.split())  # not one token a word: the words→tokens scale matters
            both = (await client.post(f"{p.url}/tokenize", json={"prompt": [text, "a b"]})).json()
            assert both["count"] == [tok["count"], 2]
            done = (await client.post(f"{p.url}/v1/completions", json={"prompt": text, "max_tokens": 1})).json()
            assert done["usage"]["prompt_tokens"] == tok["count"]

            for want in (300, 60):
                before = set((await client.get(f"{p.url}/sim/ground_truth")).json()["requests"])
                run = await _run(p.url, dataclasses.replace(PROFILE, input_len=f"fixed:{want}"))
                truth = (await client.get(f"{p.url}/sim/ground_truth")).json()["requests"]
                counted = [r["prompt_tokens"] for rid, r in truth.items() if rid not in before]
                assert len(counted) == 24
                mean_error = abs(statistics.fmean(counted) / want - 1)
                median_error = statistics.median(abs(c / want - 1) for c in counted)
                assert mean_error <= 0.03 and median_error <= 0.06, (want, counted)
                lv = run.levels[0]
                assert str(lv.workload["lengths"]).startswith("tokens (") and "a word, /v1/tokenize)" in lv.workload["lengths"]
                assert not [w for w in lv.warnings if "in words" in w]
                trial = Trial(id=1, unit_text="", levels=[lv])
                assert provenance(trial)["lengths"] == lv.workload["lengths"]  # session show, the report, compare
    finally:
        p.stop()


async def test_a_server_without_tokenize_keeps_words_and_says_so() -> None:
    async with TruthServer() as s:  # answers completions only: /v1/tokenize is a 404
        run = await _run(s.url, dataclasses.replace(PROFILE, input_len="fixed:40", requests=8))
    words = {len(b["prompt"].split()) for b in s.log.bodies}
    assert words == {40}
    lv = run.levels[0]
    note = "input lengths in words: the server has no /v1/tokenize (404) to count tokens"
    assert lv.workload["lengths"] == note and note in lv.warnings


async def test_a_trace_s_input_lengths_are_tokens_too(tmp_path: Path) -> None:
    """A recorded trace's made-up prompts are cut to its input lengths in the server's tokens (their shared
    hash_ids blocks still shared)."""
    lines = [{"arrival_s": 0.01 * i, "input_length": 50 + 10 * i, "output_length": 2} for i in range(12)]
    lines[3]["hash_ids"], lines[4]["hash_ids"] = [1, 2, 3], [1, 2, 4]
    f = tmp_path / "trace.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    p = SimProcess([*seed_flags(3), "--time-scale", "20", "--load-seconds", "1"]).start()
    try:
        p.wait_ready()
        run = await _run(p.url, BenchProfile(workload=str(f), warmup=0))
        async with httpx.AsyncClient(timeout=10.0) as client:
            truth = (await client.get(f"{p.url}/sim/ground_truth")).json()["requests"]
    finally:
        p.stop()
    counted = sorted(r["prompt_tokens"] for r in truth.values() if r["completion_tokens"] == 2)
    want = [50 + 10 * i for i in range(12)]
    assert len(counted) == 12 and abs(statistics.fmean(counted) / statistics.fmean(want) - 1) <= 0.03, counted
    assert str(run.levels[0].workload["lengths"]).startswith("tokens (")
