"""Small OpenAI-style streaming servers on 127.0.0.1 with known timing, for the benchmark tests.

Each server streams `max_tokens` tokens in chunks following `pattern` (tokens per chunk, cycled),
one chunk every `delay_s` on an absolute schedule, and can misbehave on purpose (`mode`).

Speculative acceptance is reported the three ways SGLang does, each shaped as upstream writes it: the
tokenizer's counters on /metrics (added per finished request; prometheus_client's text: HELP/TYPE lines,
labels sorted, Go-style floats), the response-level `sglext.spec_tokens_details` chunk for a request that
asks `return_spec_tokens_details`, and a lifetime `avg_spec_accept_length` / `spec_accept_length` gauge
(LIFETIME_ACCEPT) that must never become a level's figure.
upstream: python/sglang/srt/observability/metrics_collector.py, python/sglang/srt/entrypoints/openai/
serving_completions.py, python/sglang/srt/entrypoints/openai/utils.py (spec_tokens_details_from_meta_info).
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
    # |endless_event (after the good chunks, bytes without an event's end: a file or a page at the URL)
    # or a usage that lies (USAGE_LIES): inflated (1,000× the tokens), decreasing, negative, far (ends early
    # claiming max_tokens)
    pattern: tuple[int, ...] = (1, 3, 2, 4)
    delay_s: float = 0.01
    fail_after_chunks: int = 2  # for reset/stall/event_error/garbage: good chunks before the fault
    accept_length: float | None = 4.0  # tokens per verify step the server counts; None: no speculative decoding
    metrics: bool = True  # /metrics answers (SGLang's --enable-metrics); False: 404
    spec_details: bool = True  # honours return_spec_tokens_details
    role_chunk: bool = True  # chat: first chunk with only the role, like SGLang
    health_drip: bool = False  # /health answers 200 and then one byte a second, for an hour
    metrics_endless: bool = False  # /metrics answers 200 and then 1 MB chunks (up to ENDLESS_CAP)


USAGE_LIES = ("usage_inflated", "usage_decreasing", "usage_negative", "usage_far")
ENDLESS_CAP = 2 * 1024 ** 3  # the "endless" body stops here, so a client without a cap is not killed by the OOM killer
LIFETIME_ACCEPT = 9.5  # the server's lifetime average: wrong for any one level on purpose


@dataclass
class ServerStats:
    requests: int = 0
    active: int = 0
    bodies: list[dict] = field(default_factory=list)
    generation_tokens: int = 0  # the counters: grow when a request finishes
    verify_calls: int = 0
    gets: list[str] = field(default_factory=list)  # paths of every GET


def verify_steps(spec: ServerSpec, tokens: int) -> int:
    """The verify steps the server says it took for `tokens` completion tokens."""
    assert spec.accept_length is not None
    return max(1, round(tokens / spec.accept_length))


def claimed_usage(mode: str, produced: int, max_tokens: int) -> int:
    """completion_tokens as the server says it: the truth, or the lie `mode` tells."""
    return {"usage_inflated": produced * 1000, "usage_decreasing": max_tokens - produced,
            "usage_negative": -produced, "usage_far": max_tokens}.get(mode, produced)


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
            if produced >= max_tokens or (spec.mode == "usage_far" and n_chunk == 2):
                break
            if n_chunk == spec.fail_after_chunks and spec.mode in ("reset", "stall", "event_error", "error_json", "garbage",
                                                                "endless_event"):
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
                claim = claimed_usage(spec.mode, produced, max_tokens)
                obj["usage"] = {"prompt_tokens": 5, "completion_tokens": claim, "total_tokens": 5 + claim}
            await resp.write(_odd_event(obj) if spec.mode == "odd_sse" else _event(obj))
        verify = verify_steps(spec, produced) if spec.accept_length is not None else 0
        stats.generation_tokens += produced
        stats.verify_calls += verify
        if spec.accept_length is not None and spec.spec_details and body.get("return_spec_tokens_details"):
            details = {
                "spec_accept_rate": 0.0, "spec_accept_length": produced / verify, "spec_cap_length": 0.0,
                "spec_block_accept_length": 0.0, "spec_num_correct_drafts": produced - verify,
                "spec_num_proposed_drafts": verify * 3, "spec_verify_ct": verify,
                "spec_correct_drafts_histogram": [], "spec_cap_lens_histogram": [],
            }
            obj = "chat.completion.chunk" if chat else "text_completion"
            await resp.write(_event({"id": "x", "object": obj, "created": 1, "model": "test-model", "choices": [],
                                     "usage": None, "sglext": {"spec_tokens_details": details}}))
        if spec.mode != "nousage":
            claim = claimed_usage(spec.mode, produced, max_tokens)
            usage = {"prompt_tokens": 5, "completion_tokens": claim, "total_tokens": 5 + claim}
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
        elif spec.mode == "endless_event":
            for _ in range(ENDLESS_CAP // 65536):  # until the client hangs up (or the cap)
                await resp.write(b"A" * 65536)

    async def server_info(request: web.Request) -> web.Response:
        stats.gets.append(request.path)
        state = {"avg_spec_accept_length": LIFETIME_ACCEPT} if spec.accept_length is not None else {}
        return web.json_response({"internal_states": [state]})

    async def health(request: web.Request) -> web.StreamResponse:
        stats.gets.append(request.path)
        if not spec.health_drip:
            return web.Response(text="")
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await resp.prepare(request)
        for _ in range(3600):
            await resp.write(b".")
            await asyncio.sleep(1.0)
        return resp

    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/plain; version=0.0.4"})
        await resp.prepare(request)
        line = b"# HELP sglang:filler " + b"x" * 1000 + b"\n"
        chunk = line * 1024
        for _ in range(ENDLESS_CAP // len(chunk)):
            await resp.write(chunk)
        return resp

    async def metrics(request: web.Request) -> web.StreamResponse:
        stats.gets.append(request.path)
        if not spec.metrics:
            raise web.HTTPNotFound()
        if spec.metrics_endless:
            return await endless(request)
        # as prometheus_client writes SGLang's collectors (labels sorted, values floatToGoString)
        sched = 'engine_type="unified",model_name="test-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
        tok = 'engine_type="unified",is_streaming="true",model_name="test-model"'
        lines = [
            "# HELP sglang:spec_accept_length Mean acceptance length of speculative decoding "
            "(accepted drafts + bonus token per forward).",
            "# TYPE sglang:spec_accept_length gauge",
            f"sglang:spec_accept_length{{{sched}}} {float(LIFETIME_ACCEPT)}",
            "# HELP sglang:generation_tokens_total Number of generation tokens processed.",
            "# TYPE sglang:generation_tokens_total counter",
        ]
        if stats.generation_tokens:
            lines.append(f"sglang:generation_tokens_total{{{tok}}} {float(stats.generation_tokens)}")
        if stats.verify_calls:  # a labelled counter appears once it was first incremented
            lines += ["# HELP sglang:spec_verify_calls_total Number of speculative decoding verification calls.",
                      "# TYPE sglang:spec_verify_calls_total counter",
                      f'sglang:spec_verify_calls_total{{engine_type="unified",model_name="test-model"}} '
                      f"{float(stats.verify_calls)}"]
        return web.Response(text="\n".join(lines) + "\n")

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "test-model"}]})

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/server_info", server_info)
    app.router.add_get("/get_server_info", server_info)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/health", health)
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
