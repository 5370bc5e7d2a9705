"""Input lengths in tokens: how many tokens a word of a workload costs on a server, measured once per host and
workload through SGLang's `POST /v1/tokenize` (`{"prompt": ...}` → `{"count": N, ...}`), so a requested input
length of N tokens is built from N / (tokens a word) of the workload's words. A server without the endpoint (404)
or that fails it leaves the lengths in words, and the run says so."""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp
import orjson

TOKENIZE_PATH = "/v1/tokenize"
TIMEOUT_S = 10.0
SAMPLE_WORDS = 4000  # enough of the workload's text for a ratio to a few tenths of a percent


@dataclass(frozen=True, slots=True)
class TokenScale:
    """Tokens a word of one workload on one server; None: lengths are in words (`note` says why)."""
    tokens_per_word: float | None
    note: str


_MEASURED: dict[tuple[str, str], TokenScale] = {}  # (server, workload hash) → its scale: once per host


def sample_text(texts: list[str]) -> str:
    """The workload's own text, its items in order, up to SAMPLE_WORDS words."""
    words: list[str] = []
    for t in texts:
        words.extend(t.split())
        if len(words) >= SAMPLE_WORDS:
            break
    return " ".join(words[:SAMPLE_WORDS])


async def token_scale(client: aiohttp.ClientSession, base_url: str, workload_hash: str, sample: str) -> TokenScale:
    """The workload's tokens a word on the server at `base_url` (measured once per server and workload)."""
    key = (base_url, workload_hash)
    if key in _MEASURED:
        return _MEASURED[key]
    words = len(sample.split())
    scale = TokenScale(None, "input lengths in words: the workload has no text to measure")
    if words:
        scale = await _measure(client, base_url + TOKENIZE_PATH, sample, words)
    _MEASURED[key] = scale
    return scale


async def _measure(client: aiohttp.ClientSession, url: str, sample: str, words: int) -> TokenScale:
    body = orjson.dumps({"prompt": sample, "add_special_tokens": False})
    try:
        async with client.post(url, data=body, headers={"Content-Type": "application/json"},
                               timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as resp:
            if resp.status == 404:
                return TokenScale(None, f"input lengths in words: the server has no {TOKENIZE_PATH} (404) to count "
                                        "tokens")
            if resp.status != 200:
                return TokenScale(None, f"input lengths in words: {TOKENIZE_PATH} answered HTTP {resp.status}")
            data = orjson.loads(await resp.read())
    except (TimeoutError, aiohttp.ClientError, OSError, orjson.JSONDecodeError):
        return TokenScale(None, f"input lengths in words: {TOKENIZE_PATH} did not answer")
    count = data.get("count") if isinstance(data, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return TokenScale(None, f"input lengths in words: {TOKENIZE_PATH} gave no token count")
    ratio = count / words
    return TokenScale(ratio, f"input lengths in tokens: {ratio:.3f} tokens a word ({TOKENIZE_PATH})")
