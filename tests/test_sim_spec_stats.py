"""The simulator reports a request's speculative acceptance the ways SGLang does, under SGLang's names.

- /metrics: `sglang:generation_tokens_total` and `sglang:spec_verify_calls_total`, added when a request
  finishes (upstream: python/sglang/srt/observability/metrics_collector.py, observe_one_finished_request).
- a request with `return_spec_tokens_details` gets, after its last content chunk and before the usage chunk,
  a response-level chunk `{"choices": [], "sglext": {"spec_tokens_details": {...}}}`; a non-streamed
  response carries `sglext` at the top level (upstream: python/sglang/srt/entrypoints/openai/
  serving_completions.py, serving_chat.py, utils.py spec_tokens_details_from_meta_info).
"""

from __future__ import annotations

import aiohttp
import pytest

from specdec_tui.bench.server_stats import GENERATION_TOKENS, VERIFY_CALLS, parse_metrics
from tests.test_sim_support import TRAP_PROMPT, SimProcess, get_json, seed_flags, stream_completion

FAST = ["--time-scale", "20", "--load-seconds", "1", "--enable-metrics"]
DETAIL_KEYS = {
    "spec_accept_rate", "spec_accept_length", "spec_cap_length", "spec_block_accept_length",
    "spec_num_correct_drafts", "spec_num_proposed_drafts", "spec_verify_ct", "spec_correct_drafts_histogram",
    "spec_cap_lens_histogram",
}


@pytest.fixture(scope="module")
def servers():
    procs = {"spec": SimProcess([*seed_flags(3), *FAST]).start(),
             "plain": SimProcess(["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", *FAST]).start()}
    yield procs
    for p in procs.values():
        p.stop()


async def _metrics(s: aiohttp.ClientSession, url: str) -> dict[str, float]:
    async with s.get(url + "/metrics") as r:
        return parse_metrics(await r.text())


def _body(**kw: object) -> dict:
    return {"prompt": TRAP_PROMPT, "max_tokens": 120, "temperature": 0, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}, **kw}


@pytest.mark.parametrize("chat", [False, True])
async def test_details_chunk_matches_the_counters_delta(servers, chat: bool):
    p = servers["spec"]
    p.wait_ready()
    body = _body(return_spec_tokens_details=True)
    if chat:
        body["messages"] = [{"role": "user", "content": body.pop("prompt")}]
    async with aiohttp.ClientSession() as s:
        before = await _metrics(s, p.url)
        res = await stream_completion(s, p.url, body, chat=chat)
        after = await _metrics(s, p.url)
    *content, ext_chunk, usage_chunk = res.chunks
    assert all(c["choices"] for c in content) and res.done
    assert ext_chunk["choices"] == [] and ext_chunk["object"] == ("chat.completion.chunk" if chat else "text_completion")
    details = ext_chunk["sglext"]["spec_tokens_details"]
    assert set(details) == DETAIL_KEYS and set(ext_chunk["sglext"]) == {"spec_tokens_details"}
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 120
    verify = details["spec_verify_ct"]
    assert after[VERIFY_CALLS] - before.get(VERIFY_CALLS, 0.0) == verify
    assert after[GENERATION_TOKENS] - before[GENERATION_TOKENS] == 120
    assert details["spec_accept_length"] == pytest.approx(120 / verify)
    assert 3.0 < details["spec_accept_length"] <= 4.0  # the trap at steps 3: E = 3.71, at most steps + 1
    assert details["spec_num_proposed_drafts"] == verify * 3  # num_draft_tokens - 1 drafts per verify step
    assert sum(details["spec_correct_drafts_histogram"]) == verify
    assert details["spec_accept_rate"] == pytest.approx(details["spec_num_correct_drafts"] / (verify * 3))


async def test_no_details_unless_asked_and_top_level_when_not_streamed(servers):
    p = servers["spec"]
    p.wait_ready()
    async with aiohttp.ClientSession() as s:
        plain = await stream_completion(s, p.url, _body())
        async with s.post(p.url + "/v1/completions", json=_body(stream=False, return_spec_tokens_details=True)) as r:
            whole = await r.json()
    assert not any("sglext" in c for c in plain.chunks)
    assert whole["sglext"]["spec_tokens_details"]["spec_verify_ct"] > 0


async def test_without_speculative_decoding_no_details_and_no_verify_samples(servers):
    p = servers["plain"]
    p.wait_ready()
    async with aiohttp.ClientSession() as s:
        res = await stream_completion(s, p.url, _body(return_spec_tokens_details=True))
        metrics = await _metrics(s, p.url)
        truth = await get_json(s, p.url + "/sim/ground_truth")
    assert not any("sglext" in c for c in res.chunks)
    assert VERIFY_CALLS not in metrics and metrics[GENERATION_TOKENS] == truth["totals"]["completion_tokens"]
