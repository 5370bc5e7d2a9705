"""The simulated server's HTTP side (aiohttp): SGLang 0.5.23's health, info, metrics, native and OpenAI routes.

Entry point `run(argv)`: parse args, play the loading phase (port closed), bind, warm up, serve until SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Sequence
from enum import Enum
from typing import Any

import orjson
from aiohttp import web

from specdec_tui.sim import model
from specdec_tui.sim.args import SimArgs, parse_sim_args
from specdec_tui.sim.cluster import ClusterError, ClusterLink, log_peer_lost, rendezvous
from specdec_tui.sim.engine import Engine
from specdec_tui.sim.http_util import SENT_STATUS, json_response
from specdec_tui.sim.logs import SimLog
from specdec_tui.sim.metrics import prometheus_text
from specdec_tui.sim.native import serve_generate
from specdec_tui.sim.openai import BadRequest, ChunkShaper, parse_request
from specdec_tui.sim.requests import GenParams
from specdec_tui.sim.server_info import (
    Identity,
    model_card,
    model_info,
    model_not_found,
    server_info,
    startup_time,
)
from specdec_tui.sim.startup import (
    StartupFailed,
    engine_config,
    log_uvicorn_start,
    log_uvicorn_stop,
    run_startup,
    sim_profile,
)
from specdec_tui.sim.tokenizer import tokenize_routes

OPEN_PATHS = ("/health", "/health_generate", "/ready", "/metrics", "/sim/")
STATE_KEY = web.AppKey("sim_state", object)


# upstream: python/sglang/srt/entrypoints/http_server.py (the deprecated aliases log this on every call)
DEPRECATED_ENDPOINT = ("Endpoint '{old}' is deprecated and will be removed in a future version. "
                       "Please use '{new}' instead.")
# upstream: http_server.py `_execute_server_warmup` sleeps a second before it first asks /model_info, then sends one
# greedy /generate of 8 tokens; tokenizer_manager.py `running_phase_sigquit_handler` logs a child's SIGQUIT.
WARMUP_WAIT_S = 1.0
WARMUP_TOKENS = 8
RUNNING_SIGQUIT = ("SIGQUIT received. signum=3, frame=<frame at 0x7f2a3c1e4a40, file '/usr/lib/python3.12/selectors.py', "
                   "line 468, code select>. It usually means one child failed.")


class ServerStatus(Enum):
    """Upstream's tokenizer-manager status as /health sees it: 503 until warmup ends and while shutting down."""

    STARTING = "starting"
    UP = "up"
    SHUTTING_DOWN = "shutting down"


class SimServer:
    """Holds the resolved args, the memory plan and the engine; serves the routes."""

    def __init__(self, a: SimArgs, plan: model.MemoryPlan, log: SimLog, startup_s: float = 0.0,
                 launch_command: str = "") -> None:
        self.a = a
        self.plan = plan
        self.log = log
        self.status = ServerStatus.STARTING
        self.identity = Identity(a, plan, launch_command, startup_time(a, startup_s))
        s = a.server
        self.model_name = s["served_model_name"]
        self.profile = sim_profile(a).profile
        self.engine = Engine(
            engine_config(a, plan),
            log,
        )

    # ---- app ----------------------------------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._access_log, self._api_key])
        app[STATE_KEY] = self
        r = app.router
        r.add_get("/health", self.health)
        r.add_get("/health_generate", self.health_generate)
        r.add_get("/ready", self.ready)
        r.add_get("/v1/models", self.models)
        r.add_get("/v1/models/{model:.+}", self.retrieve_model)
        r.add_get("/server_info", self.server_info)
        r.add_get("/get_server_info", self.get_server_info)
        r.add_get("/model_info", self.model_info)
        r.add_get("/get_model_info", self.get_model_info)
        r.add_post("/generate", self.generate)
        r.add_put("/generate", self.generate)
        r.add_post("/v1/completions", self.completions)
        r.add_post("/v1/chat/completions", self.chat_completions)
        r.add_get("/sim/ground_truth", self.ground_truth)
        tokenize_routes(r, int(self.a.server["context_length"]))
        if self.a.server.get("enable_metrics"):
            r.add_get("/metrics", self.metrics)
        return app

    @web.middleware
    async def _access_log(self, request: web.Request, handler: Any) -> web.StreamResponse:
        status = 500
        try:
            resp: web.StreamResponse = await handler(request)
            status = resp.status
            return resp
        except web.HTTPException as exc:
            status = exc.status
            raise
        except asyncio.CancelledError:  # the client left; uvicorn logs the status it had sent, if any
            status = request.get(SENT_STATUS, 499)
            raise
        finally:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            who = f"{peer[0]}:{peer[1]}" if peer else "127.0.0.1:0"
            self.log.access(who, request.method, request.path_qs, status, _reason(status))

    @web.middleware
    async def _api_key(self, request: web.Request, handler: Any) -> web.StreamResponse:
        key = self.a.server.get("api_key")
        if key and request.method != "OPTIONS" and not request.path.startswith(OPEN_PATHS):
            if request.headers.get("Authorization", "") != f"Bearer {key}":
                return json_response({"error": "Unauthorized"}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    # ---- routes -------------------------------------------------------------------------------------------------
    def _not_serving(self) -> web.Response | None:
        """Upstream's 503 answers: during shutdown (logged) and from bind until warmup ends (silent)."""
        if self.status is ServerStatus.SHUTTING_DOWN:
            self.log.line("Health check request received during shutdown. Returning 503.")
            return web.Response(status=503)
        if self.status is ServerStatus.STARTING:
            return web.Response(status=503)
        return None

    async def health(self, request: web.Request) -> web.Response:
        return self._not_serving() or web.Response(status=200)

    async def health_generate(self, request: web.Request) -> web.Response:
        """One token from input_ids [0], with log_metrics off: it moves none of the tokenizer's counters."""
        refused = self._not_serving()
        if refused is not None:
            return refused
        req = self.engine.submit(GenParams(prompt="", max_tokens=1, temperature=0.0, ignore_eos=False,
                                           log_metrics=False))
        while not req.done:
            await req.out.get()
        return web.Response(status=200)

    async def ready(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if self.status is ServerStatus.UP else 503)

    async def models(self, request: web.Request) -> web.Response:
        return json_response({"object": "list", "data": [model_card(self.model_name, self.a.server["context_length"])]})

    async def retrieve_model(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        if name != self.model_name:
            return json_response(model_not_found(name), status=404)
        return json_response(model_card(name, self.a.server["context_length"]))

    async def model_info(self, request: web.Request) -> web.Response:
        return json_response(model_info(self.a, self.profile))

    async def get_model_info(self, request: web.Request) -> web.Response:
        self.log.line(DEPRECATED_ENDPOINT.format(old="/get_model_info", new="/model_info"))
        return await self.model_info(request)

    async def server_info(self, request: web.Request) -> web.Response:
        return json_response(server_info(self.identity, self.engine))

    async def get_server_info(self, request: web.Request) -> web.Response:
        self.log.line(DEPRECATED_ENDPOINT.format(old="/get_server_info", new="/server_info"))
        return await self.server_info(request)

    async def metrics(self, request: web.Request) -> web.Response:
        text = prometheus_text(self.engine, self.model_name, self.plan)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    async def ground_truth(self, request: web.Request) -> web.Response:
        return json_response(self.engine.ground_truth())

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _generate(self, request: web.Request, chat: bool) -> web.StreamResponse:
        try:
            body = orjson.loads(await request.read())
            params, opts = parse_request(body, chat, default_max_tokens=128 if not chat else 4096)
        except (orjson.JSONDecodeError, BadRequest) as err:
            return json_response({"object": "error", "message": str(err), "type": "BadRequestError", "param": None,
                          "code": 400}, status=400)
        req = self.engine.submit(params)
        shaper = ChunkShaper(req, opts, self._draft_tokens)
        if not opts.stream:
            parts: list[str] = []
            try:
                while not req.done:
                    parts.append((await req.out.get()).text)
            except asyncio.CancelledError:
                self.engine.cancel(req)
                raise
            return json_response(shaper.full_response("".join(parts)))
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                       "Cache-Control": "no-cache"})
        await resp.prepare(request)
        request[SENT_STATUS] = resp.status
        try:
            if chat:
                await resp.write(b"data: " + orjson.dumps(shaper.role_chunk()) + b"\n\n")
            while True:
                em = await req.out.get()
                for chunk in shaper.content_chunks(em):
                    await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
                if em.finish_reason:
                    break
            if (ext := shaper.sglext_chunk()) is not None:
                await resp.write(b"data: " + orjson.dumps(ext) + b"\n\n")
            if opts.include_usage:
                await resp.write(b"data: " + orjson.dumps(shaper.usage_chunk()) + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ConnectionResetError:  # aiohttp's ClientConnectionResetError is one too
            # The client went away mid-stream (a cancelled benchmark). SGLang aborts the request and logs
            # nothing alarming; the status already on the wire is 200, so the access line says so.
            self.engine.cancel(req)
        except asyncio.CancelledError:  # aiohttp cancels the handler when the connection drops
            self.engine.cancel(req)
            raise
        return resp


    @property
    def _draft_tokens(self) -> int:
        return self.engine.cfg.num_draft_tokens if self.a.spec_steps > 0 else 0

    async def generate(self, request: web.Request) -> web.StreamResponse:
        return await serve_generate(self.engine, self._draft_tokens, request)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


async def warm_up(server: SimServer) -> None:
    """SGLang's warmup: a second's wait, /model_info, one greedy /generate of 8 tokens; then readiness, a
    /freeze_gc, and the ready line. /health answers 503 until the generate returns (so the panel's "warming up"
    lasts what it lasts upstream: over a second at time scale 1, scaled as every sim timing is)."""
    log = server.log
    if not server.a.server.get("skip_server_warmup"):
        await asyncio.sleep(WARMUP_WAIT_S / server.a.time_scale)
        log.access("127.0.0.1:40000", "GET", "/model_info", 200, "OK")
        req = server.engine.submit(GenParams(prompt="The capital city of France is", max_tokens=WARMUP_TOKENS,
                                             temperature=0.0, ignore_eos=False))
        while not req.done:
            await req.out.get()
        log.access("127.0.0.1:40002", "POST", "/generate", 200, "OK")
    server.status = ServerStatus.UP
    log.access("127.0.0.1:40004", "POST", "/freeze_gc", 200, "OK")
    log.line("The server is fired up and ready to roll!", important=True)


async def serve(a: SimArgs, log: SimLog) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    began = time.monotonic()
    startup = asyncio.create_task(_start(a, log))
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait({startup, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if stop.is_set() and not startup.done():
        startup.cancel()
        await asyncio.wait({startup})
        return 0
    stopper.cancel()
    try:
        plan, link = startup.result()
    except (StartupFailed, ClusterError):
        return 1
    if link is not None and link.rank > 0:
        return await _serve_as_worker(link, stop, log)
    server = SimServer(a, plan, log, startup_s=(time.monotonic() - began) * a.time_scale,
                       launch_command=" ".join(sys.argv[1:]))
    server.engine.start()
    runner = web.AppRunner(server.build_app(), access_log=None, handle_signals=False)
    await runner.setup()
    host, port = a.server["host"], a.server["port"]
    try:
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
    except OSError as err:
        log.line(f"ERROR:    [Errno {err.errno}] error while attempting to bind on address ({host!r}, {port}): "
                 f"{err.strerror}", important=True)
        await runner.cleanup()
        return 1
    log_uvicorn_start(log, host, port)
    await warm_up(server)
    crash: asyncio.Task[None] | None = None
    if a.sim_fail == "crash-after-ready":
        crash = asyncio.create_task(asyncio.sleep(max(0.5, a.load_seconds) / a.time_scale))
    waiter = asyncio.create_task(stop.wait())
    lost = link.lost if link is not None else None
    done, _ = await asyncio.wait({t for t in (waiter, crash, lost) if t}, return_when=asyncio.FIRST_COMPLETED)
    code = 0
    server.status = ServerStatus.SHUTTING_DOWN
    if lost is not None and lost in done:
        log_peer_lost(log, lost.result())
        code = 1
    elif crash is not None and crash in done:
        log.line("Scheduler hit an exception: Traceback (most recent call last):\n"
                 "RuntimeError: CUDA error: an illegal memory access was encountered", tp_rank=0, important=True)
        log.line(RUNNING_SIGQUIT, important=True)  # after start-up the tokenizer manager's handler answers
        code = 1
    else:
        log_uvicorn_stop(log)
    waiter.cancel()
    if link is not None:
        await link.close()
    await server.engine.stop()
    await runner.cleanup()
    return code


async def _start(a: SimArgs, log: SimLog) -> tuple[model.MemoryPlan, ClusterLink | None]:
    """The multi-node rendezvous (a no-op for one node), then the loading phase; a failed start closes the links."""
    s = a.server
    links: list[ClusterLink] = []

    async def join_world() -> None:
        link = await rendezvous(s["nnodes"], s["node_rank"], s["dist_init_addr"], log)
        links.extend([link] if link is not None else [])

    try:
        return await run_startup(a, log, join_world), (links[0] if links else None)
    except BaseException:
        for link in links:
            await link.close()
        raise


async def _serve_as_worker(link: ClusterLink, stop: asyncio.Event, log: SimLog) -> int:
    """A rank > 0 runs no tokenizer and no HTTP (upstream: "non-zero rank nodes do not need to run tokenizer or
    detokenizer"); it lives until it is stopped (0) or node 0 goes away (1, in the scheduler's words)."""
    assert link.lost is not None
    waiter = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({waiter, link.lost}, return_when=asyncio.FIRST_COMPLETED)  # type: ignore[type-var]
    waiter.cancel()
    code = 0
    if link.lost in done:
        log_peer_lost(log, link.lost.result())
        code = 1
    await link.close()
    return code


def run(argv: Sequence[str] | None = None, prog: str = "python -m specdec_tui.sim") -> int:
    """Process entry: returns the exit code (0 on SIGTERM, 1 on a failed start, 2 on bad flags)."""
    try:
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    a = parse_sim_args(argv, prog=prog)
    log = SimLog(a.server["tp_size"], level=a.server["log_level"])
    try:
        return asyncio.run(serve(a, log))
    except KeyboardInterrupt:
        return 0
