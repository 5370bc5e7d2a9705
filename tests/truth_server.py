"""A "truth server" on 127.0.0.1: an OpenAI-style streaming server whose latencies are set by each request
and whose arrivals are logged, so a test knows exactly what the benchmark should have measured.

A prompt (or last chat message) may carry `ttft=MS` (delay before the first token) and `gap=MS` (between
tokens); it streams `max_tokens` tokens, one per chunk, with usage on every chunk. Every request's arrival
time (perf_counter, s), body and in-flight count at arrival are kept in `TruthLog`.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

_TTFT = re.compile(r"ttft=(\d+(?:\.\d+)?)")
_GAP = re.compile(r"gap=(\d+(?:\.\d+)?)")


@dataclass
class TruthLog:
    arrivals: list[float] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0


def _text_of(body: dict[str, Any]) -> str:
    if "messages" in body:
        return str(body["messages"][-1].get("content", ""))
    return str(body.get("prompt", ""))


def make_truth_app(log: TruthLog, default_ttft_ms: float = 0.0, default_gap_ms: float = 0.0) -> web.Application:
    async def completions(request: web.Request) -> web.StreamResponse:
        log.arrivals.append(time.perf_counter())
        body = orjson.loads(await request.read())
        log.bodies.append(body)
        log.in_flight += 1
        log.peak = max(log.peak, log.in_flight)
        try:
            text = _text_of(body)
            ttft = float(m.group(1)) if (m := _TTFT.search(text)) else default_ttft_ms
            gap = float(m.group(1)) if (m := _GAP.search(text)) else default_gap_ms
            chat = request.path.endswith("/chat/completions")
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            t0 = time.perf_counter()
            n = int(body.get("max_tokens", 16))
            for i in range(n):
                due = t0 + (ttft + i * gap) / 1000.0
                if (wait := due - time.perf_counter()) > 0:
                    await asyncio.sleep(wait)
                word = f"w{i} "
                choice: dict[str, Any] = ({"index": 0, "delta": {"content": word}, "finish_reason": None} if chat
                                          else {"index": 0, "text": word, "finish_reason": None})
                if i == n - 1:
                    choice["finish_reason"] = "length"
                chunk = {"choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": i + 1, "total_tokens": i + 2}}
                await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            return resp
        finally:
            log.in_flight -= 1

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "truth"}]})

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    return app


class TruthServer:
    """`async with TruthServer() as s:` → s.url, s.log."""

    def __init__(self, default_ttft_ms: float = 0.0, default_gap_ms: float = 0.0) -> None:
        self.log = TruthLog()
        self._app = make_truth_app(self.log, default_ttft_ms, default_gap_ms)
        self.url = ""

    async def __aenter__(self) -> TruthServer:
        self._runner = web.AppRunner(self._app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()
