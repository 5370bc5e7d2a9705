"""The level's own speculative acceptance, from the best source the server offers.

1. Server counters. SGLang's tokenizer adds, for every finished request, its completion tokens to
   `sglang:generation_tokens_total` (labels engine_type, is_streaming, model_name) and its verify steps to
   `sglang:spec_verify_calls_total` (engine_type, model_name). Both need `--enable-metrics`. A snapshot
   taken before the level's first request and one after its last differ by exactly the level's requests,
   so Δtokens / Δverify calls is the level's accept length (bonus token included, upstream's definition).
2. Per-request details. Asked for with `return_spec_tokens_details`, SGLang ends a streamed response with a
   response-level chunk `{"choices": [], "sglext": {"spec_tokens_details": {"spec_verify_ct": ..., ...}}}`
   (built from the request's `meta_info.spec_verify_ct`); Σ completion tokens / Σ spec_verify_ct over the
   level's requests.
3. Otherwise tokens per content chunk, labelled an estimate: a server that coalesces steps into one
   chunk, or sends a step's tokens in several, moves it away from the true figure.

`avg_spec_accept_length` (/server_info) and the `sglang:spec_accept_length` gauge are recent or lifetime
averages, never one level's: neither is the level's figure. /server_info's is read after each level all the same
(`server_avg_accept_length`) and shown beside it, labelled, because it is what SGLang's own bench_serving prints
("Accept length:", read from `internal_states[0]` after its run), so an operator comparing with it sees that number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import aiohttp

from specdec_tui.core.prometheus_text import Counters, parse_metrics
from specdec_tui.core.results import AcceptSource

PROBE_TIMEOUT_S = 5.0
BODY_LIMIT = 16 * 1024 * 1024  # bytes of /metrics or /v1/models read at most: SGLang's /metrics is a few hundred KB
GENERATION_TOKENS = "sglang:generation_tokens_total"
VERIFY_CALLS = "sglang:spec_verify_calls_total"


@dataclass(frozen=True, slots=True)
class LevelAcceptance:
    value: float | None
    source: AcceptSource | None


async def get_body(session: aiohttp.ClientSession, url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bytes | None:
    """The body of a 200 answer to GET `url`; None for any other status, any failure, or a body longer than
    BODY_LIMIT (an endless /metrics grew the client past 600 MB before its timeout)."""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
            if resp.status != 200:
                return None
            body = bytearray()
            while part := await resp.content.read(1 << 16):
                body += part
                if len(body) > BODY_LIMIT:
                    return None
            return bytes(body)
    except (TimeoutError, aiohttp.ClientError, OSError):
        return None


async def counters(session: aiohttp.ClientSession, base_url: str) -> Counters | None:
    """The server's /metrics now; None when it has none (metrics off) or cannot be read."""
    body = await get_body(session, f"{base_url}/metrics")
    return parse_metrics(body.decode("utf-8", "replace")) if body else None


async def server_avg_accept_length(session: aiohttp.ClientSession, base_url: str) -> float | None:
    """/server_info's `internal_states[0].avg_spec_accept_length` (a PD router's decode side first, as
    bench_serving reads it); None when the server has none (no speculation, nothing verified yet) or no answer.
    upstream: python/sglang/benchmark/serving.py, after the run."""
    body = await get_body(session, f"{base_url}/server_info")
    if not body:
        return None
    try:
        info = json.loads(body)
    except ValueError:
        return None
    if isinstance(info, dict) and isinstance(info.get("decode"), list) and info["decode"]:
        info = info["decode"][0]
    states = info.get("internal_states") if isinstance(info, dict) else None
    state = states[0] if isinstance(states, list) and states and isinstance(states[0], dict) else {}
    value = state.get("avg_spec_accept_length")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def accept_from_counters(before: Counters | None, after: Counters | None) -> float | None:
    """Δgeneration tokens / Δverify calls between two snapshots; None without both counters or verify steps.
    A counter that is absent before (no request had finished with it yet) started at 0."""
    if before is None or after is None or GENERATION_TOKENS not in after or VERIFY_CALLS not in after:
        return None
    d_tokens = after[GENERATION_TOKENS] - before.get(GENERATION_TOKENS, 0.0)
    d_verify = after[VERIFY_CALLS] - before.get(VERIFY_CALLS, 0.0)
    if d_verify <= 0 or d_tokens <= 0:  # no speculative step in the window, or the server restarted
        return None
    return d_tokens / d_verify


def accept_from_details(requests: Iterable[tuple[int, int]]) -> float | None:
    """Σ completion tokens / Σ spec_verify_ct over (completion tokens, spec_verify_ct) pairs."""
    tokens = verify = 0
    for t, v in requests:
        tokens += t
        verify += v
    return tokens / verify if verify > 0 and tokens > 0 else None


def level_acceptance(
    from_counters: float | None, from_details: float | None, from_stream: float | None
) -> LevelAcceptance:
    """The best figure available, with where it came from."""
    if from_counters is not None:
        return LevelAcceptance(from_counters, AcceptSource.SERVER_COUNTERS)
    if from_details is not None:
        return LevelAcceptance(from_details, AcceptSource.REQUEST_DETAILS)
    if from_stream is not None:
        return LevelAcceptance(from_stream, AcceptSource.STREAM_ESTIMATE)
    return LevelAcceptance(None, None)
