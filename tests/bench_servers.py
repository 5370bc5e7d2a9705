"""Small OpenAI-style streaming servers on 127.0.0.1 with known timing, for the benchmark tests.

Each server streams `max_tokens` tokens in chunks following `pattern` (tokens per chunk, cycled),
one chunk every `delay_s` on an absolute schedule, and can misbehave on purpose (`mode`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field

import orjson
from aiohttp import web

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember fjord "
    "grove heath iris jade kelp lotus moss nectar opal pine quartz reed sage thyme umber vale willow yarrow"
).split()


@dataclass
class ServerSpec:
    mode: str = "normal"  # normal|nousage|final_usage|http500|reset|stall|event_error|error_json|garbage|degenerate|odd_sse
    pattern: tuple[int, ...] = (1, 3, 2, 4)
    delay_s: float = 0.01
    fail_after_chunks: int = 2  # for reset/stall/event_error/garbage: good chunks before the fault
    accept_length: float | None = 3.25  # served on /get_server_info and /metrics; None: 404
    role_chunk: bool = True  # chat: first chunk with only the role, like SGLang


@dataclass
class ServerStats:
    requests: int = 0
    active: int = 0
    bodies: list[dict] = field(default_factory=list)


def _text(i: int, degenerate: bool) -> str:
    return "again " if degenerate else f"{WORDS[(i * 7 + i // len(WORDS)) % len(WORDS)]}{i} "


def make_app(spec: ServerSpec, stats: ServerStats) -> web.Application:
    async def completions(request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        stats.requests += 1
        stats.bodies.append(body)
        chat = request.path.endswith("/chat/completions")
        if spec.mode == "http500":
            return web.json_response({"error": {"message": "internal failure"}}, status=500)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        stats.active += 1
        try:
            await _stream(resp, request, body, chat)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        finally:
            stats.active -= 1
        return resp

    async def _stream(resp: web.StreamResponse, request: web.Request, body: dict, chat: bool) -> None:
        max_tokens = int(body.get("max_tokens", 16))
        usage_each = spec.mode not in ("nousage", "final_usage")
        start = time.monotonic()
        produced = 0
        n_chunk = 0
        if chat and spec.role_chunk:
            await resp.write(_event({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
        for k in itertools.cycle(spec.pattern):
            if produced >= max_tokens:
                break
            if n_chunk == spec.fail_after_chunks and spec.mode in ("reset", "stall", "event_error", "error_json", "garbage"):
                await _fail(resp, request)
                return
            k = min(k, max_tokens - produced)
            target = start + (n_chunk + 1) * spec.delay_s
            await asyncio.sleep(max(0.0, target - time.monotonic()))
            text = "".join(_text(produced + j, spec.mode == "degenerate") for j in range(k))
            produced += k
            n_chunk += 1
            last = produced >= max_tokens
            choice = {"index": 0, "finish_reason": "length" if last else None}
            if chat:
                choice["delta"] = {"content": text}
            else:
                choice["text"] = text
            obj: dict = {"id": "x", "object": "chunk", "choices": [choice]}
            if usage_each:
                obj["usage"] = {"prompt_tokens": 5, "completion_tokens": produced, "total_tokens": 5 + produced}
            await resp.write(_odd_event(obj) if spec.mode == "odd_sse" else _event(obj))
        if spec.mode != "nousage":
            usage = {"prompt_tokens": 5, "completion_tokens": produced, "total_tokens": 5 + produced}
            await resp.write(_event({"id": "x", "choices": [], "usage": usage}))
        await resp.write(b"data: [DONE]\n\n")

    async def _fail(resp: web.StreamResponse, request: web.Request) -> None:
        if spec.mode == "reset":
            assert request.transport is not None
            request.transport.abort()
        elif spec.mode == "stall":
            await asyncio.sleep(3600)
        elif spec.mode == "event_error":
            await resp.write(b'event: error\ndata: {"error": {"message": "out of memory"}}\n\n')
        elif spec.mode == "error_json":
            await resp.write(_event({"error": {"message": "bad request state", "code": 500}}))
        elif spec.mode == "garbage":
            await resp.write(b"data: {not json at all\n\n")

    async def server_info(request: web.Request) -> web.Response:
        if spec.accept_length is None:
            raise web.HTTPNotFound()
        return web.json_response({"internal_states": [{"avg_spec_accept_length": spec.accept_length}]})

    async def metrics(request: web.Request) -> web.Response:
        if spec.accept_length is None:
            raise web.HTTPNotFound()
        return web.Response(text=f'# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{{tp_rank="0"}} {spec.accept_length}\n')

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "test-model"}]})

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/get_server_info", server_info)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/v1/models", models)
    return app


def _event(obj: dict) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _odd_event(obj: dict) -> bytes:
    """The same event in legal but unusual SSE: a comment, CRLF line ends, `data:` without its space,
    the JSON cut over two data lines."""
    text = orjson.dumps(obj)
    cut = text.index(b',"choices"') + 1  # between two members: the joining newline is JSON whitespace
    return b": keep-alive\r\n\r\ndata:" + text[:cut] + b"\r\ndata: " + text[cut:] + b"\r\n\r\n"


class RunningServer:
    """`async with RunningServer(spec) as srv:` → srv.base_url, srv.stats."""

    def __init__(self, spec: ServerSpec | None = None) -> None:
        self.spec = spec or ServerSpec()
        self.stats = ServerStats()
        self.base_url = ""
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> RunningServer:
        self._runner = web.AppRunner(make_app(self.spec, self.stats), handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()
