"""The simulated model's tokenizer and SGLang's `/v1/tokenize` (and `/tokenize`) over it.

Deterministic and deliberately not one token a word: each whitespace-separated word is cut into pieces of at most
`PIECE_CHARS` characters, one token each (short words one token, long words several), so the tokens a word costs
depend on the text — a client has to measure words→tokens for its workload, as it must against a real model. The
same count is the `usage.prompt_tokens` every completion reports (engine.py). Request/response as SGLang 0.5.23's
serving_tokenize.py and protocol.py's TokenizeRequest/TokenizeResponse: `{"prompt": str | [str]}` →
`{"tokens": [...], "count": N, "max_model_len": M}` (lists for a list of prompts).
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
from aiohttp import web

PIECE_CHARS = 5  # ~1.25–1.4 tokens a word over the shipped workloads, as the old fixed 1.3 was
VOCAB = 150_000


def token_ids(text: str) -> list[int]:
    """The ids of `text`: a word's PIECE_CHARS-character pieces, each hashed into the vocabulary."""
    out: list[int] = []
    for word in text.split():
        for i in range(0, len(word), PIECE_CHARS):
            out.append(zlib.crc32(word[i:i + PIECE_CHARS].encode()) % VOCAB)
    return out


def count_tokens(text: str) -> int:
    """What a prompt costs in tokens (at least one: an empty prompt still occupies a position)."""
    return max(1, len(token_ids(text)))


def _bad(message: str) -> web.Response:
    return web.json_response({"object": "error", "message": message, "type": "BadRequestError", "code": 400},
                             status=400)


def tokenize_routes(router: web.UrlDispatcher, max_model_len: int) -> None:
    """POST /v1/tokenize and /tokenize, as SGLang 0.5.23 serves them (prompt form; messages are not simulated)."""

    async def tokenize(request: web.Request) -> web.Response:
        try:
            body: Any = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _bad("the request body is not JSON")
        prompt = body.get("prompt") if isinstance(body, dict) else None
        if isinstance(prompt, str):
            ids = token_ids(prompt)
            return web.json_response({"tokens": ids, "count": len(ids), "max_model_len": max_model_len})
        if isinstance(prompt, list) and all(isinstance(p, str) for p in prompt):
            lists = [token_ids(p) for p in prompt]
            return web.json_response({"tokens": lists, "count": [len(x) for x in lists], "max_model_len": max_model_len})
        return _bad(f"Invalid prompt type: {type(prompt).__name__}. Expected str or List[str].")

    for path in ("/v1/tokenize", "/tokenize"):
        router.add_post(path, tokenize)
