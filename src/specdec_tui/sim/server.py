"""The simulated server's HTTP side (aiohttp): SGLang's health, info, metrics and OpenAI routes.

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
from specdec_tui.sim.engine import Engine, EngineConfig, GenParams
from specdec_tui.sim.logs import SimLog
from specdec_tui.sim.metrics import prometheus_text
from specdec_tui.sim.openai import BadRequest, ChunkShaper, parse_request
from specdec_tui.sim.startup import (
    StartupFailed,
    log_uvicorn_start,
    log_uvicorn_stop,
    run_startup,
)

SGLANG_VERSION = "0.5.9"
OPEN_PATHS = ("/health", "/health_generate", "/metrics", "/sim/")
STATE_KEY = web.AppKey("sim_state", object)
SENT_STATUS = "sim_sent_status"  # request key: the status of a response whose headers are on the wire


# upstream: python/sglang/srt/entrypoints/http_server.py (the deprecated aliases log this on every call)
DEPRECATED_ENDPOINT = ("Endpoint '{old}' is deprecated and will be removed in a future version. "
                       "Please use '{new}' instead.")
# upstream: python/sglang/srt/model_executor/graph_memory_usage.py GRAPH_MEMORY_USAGE_KEYS
GRAPH_PHASES = ("prefill", "decode", "target_verify", "draft_prefill", "draft_decode", "draft_extend")


class ServerStatus(Enum):
    """Upstream's tokenizer-manager status as /health sees it: 503 until warmup ends and while shutting down."""

    STARTING = "starting"
    UP = "up"
    SHUTTING_DOWN = "shutting down"


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")


class SimServer:
    """Holds the resolved args, the memory plan and the engine; serves the routes."""

    def __init__(self, a: SimArgs, plan: model.MemoryPlan, log: SimLog, startup_s: float = 0.0) -> None:
        self.a = a
        self.plan = plan
        self.log = log
        self.created = int(time.time())
        self.status = ServerStatus.STARTING
        self.startup_time = {"scheduler_e2e": round(startup_s, 3)}  # upstream: phase -> seconds
        s = a.server
        self.model_name = s["served_model_name"]
        self.engine = Engine(
            EngineConfig(
                steps=a.spec_steps,
                num_draft_tokens=int(s.get("speculative_num_draft_tokens") or 1),
                max_running_requests=plan.max_running_requests,
                max_total_num_tokens=plan.max_total_num_tokens,
                decode_log_interval=max(1, int(s["decode_log_interval"])),
                cuda_graph=not a.decode_graph_disabled,
                time_scale=a.time_scale,
                seed=a.sim_seed,
            ),
            log,
        )

    # ---- app ----------------------------------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._access_log, self._api_key])
        app[STATE_KEY] = self
        r = app.router
        r.add_get("/health", self.health)
        r.add_get("/health_generate", self.health_generate)
        r.add_get("/v1/models", self.models)
        r.add_get("/server_info", self.server_info)
        r.add_get("/get_server_info", self.get_server_info)
        r.add_get("/model_info", self.model_info)
        r.add_get("/get_model_info", self.get_model_info)
        r.add_post("/v1/completions", self.completions)
        r.add_post("/v1/chat/completions", self.chat_completions)
        r.add_get("/sim/ground_truth", self.ground_truth)
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
                return _json({"error": "Unauthorized"}, status=401)
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
        refused = self._not_serving()
        if refused is not None:
            return refused
        req = self.engine.submit(GenParams(prompt="health", max_tokens=1, temperature=0.0, ignore_eos=False))
        while not req.done:
            await req.out.get()
        return web.Response(status=200)

    async def models(self, request: web.Request) -> web.Response:
        card = {"id": self.model_name, "object": "model", "created": self.created, "owned_by": "sglang",
                "root": self.model_name, "max_model_len": self.a.server["context_length"]}
        return _json({"object": "list", "data": [card]})

    async def model_info(self, request: web.Request) -> web.Response:
        return _json({"model_path": self.a.server["model_path"], "tokenizer_path": self.a.server["tokenizer_path"],
                      "is_generation": True, "preferred_sampling_params": None, "weight_version": "default",
                      "has_image_understanding": False, "has_audio_understanding": False,
                      "model_type": "qwen3_5_moe", "architectures": [model.MODEL_ARCH]})

    async def get_model_info(self, request: web.Request) -> web.Response:
        self.log.line(DEPRECATED_ENDPOINT.format(old="/get_model_info", new="/model_info"))
        return await self.model_info(request)

    def _graph_memory(self) -> dict[str, float]:
        """Per-phase capture memory as upstream reports it; the plan's one figure split where a spec server spends it."""
        graph = dict.fromkeys(GRAPH_PHASES, 0.0)
        total = self.plan.graph_gb
        if self.a.spec_steps > 0:
            graph.update(target_verify=round(total * 0.6, 3), draft_decode=round(total * 0.25, 3),
                         draft_extend=round(total - round(total * 0.6, 3) - round(total * 0.25, 3), 3))
        else:
            graph["decode"] = round(total, 3)
        return graph

    def _internal_state(self) -> dict[str, Any]:
        e = self.engine
        p = self.plan
        state: dict[str, Any] = dict(self.a.server)
        state.update({
            "world_size": self.a.server["tp_size"],
            "startup_time": self.startup_time,
            "effective_max_running_requests_per_dp": p.max_running_requests,
            "last_gen_throughput": e.last_gen_throughput,
            # upstream: python/sglang/srt/managers/scheduler_components/memory_usage.py build_memory_usage
            "memory_usage": {"weight": round(p.weights_gb + p.draft_weights_gb, 3),
                             "kvcache": round(p.kv_gb + p.state_gb, 3),
                             "startup_available": round(p.init_avail_gb, 3),
                             "token_capacity": p.max_total_num_tokens,
                             "token_capacity_per_dcp_rank": p.max_total_num_tokens,
                             "token_capacity_swa": None,
                             "graph": self._graph_memory()},
        })
        if self.a.spec_steps > 0:
            state["avg_spec_accept_length"] = e.avg_accept_length
        return state

    async def server_info(self, request: web.Request) -> web.Response:
        info: dict[str, Any] = dict(self.a.server)
        info.update({
            "max_total_num_tokens": self.plan.max_total_num_tokens,
            "max_req_input_len": self.a.server["context_length"] - 5,
            "startup_time": self.startup_time,
            "internal_states": [self._internal_state()],
            "version": SGLANG_VERSION,
            "kv_events": None,
        })
        return _json(info)

    async def get_server_info(self, request: web.Request) -> web.Response:
        self.log.line(DEPRECATED_ENDPOINT.format(old="/get_server_info", new="/server_info"))
        return await self.server_info(request)

    async def metrics(self, request: web.Request) -> web.Response:
        text = prometheus_text(self.engine, self.model_name, self.plan)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    async def ground_truth(self, request: web.Request) -> web.Response:
        return _json(self.engine.ground_truth())

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _generate(self, request: web.Request, chat: bool) -> web.StreamResponse:
        try:
            body = orjson.loads(await request.read())
            params, opts = parse_request(body, chat, default_max_tokens=128 if not chat else 4096)
        except (orjson.JSONDecodeError, BadRequest) as err:
            return _json({"object": "error", "message": str(err), "type": "BadRequestError", "param": None,
                          "code": 400}, status=400)
        req = self.engine.submit(params)
        shaper = ChunkShaper(req, opts, self.model_name, self.engine.cfg.num_draft_tokens if self.a.spec_steps > 0 else 0)
        if not opts.stream:
            parts: list[str] = []
            try:
                while not req.done:
                    parts.append((await req.out.get()).text)
            except asyncio.CancelledError:
                self.engine.cancel(req)
                raise
            return _json(shaper.full_response("".join(parts)))
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                       "Cache-Control": "no-cache"})
        await resp.prepare(request)
        request[SENT_STATUS] = resp.status
        try:
            if chat:
                await resp.write(b"data: " + orjson.dumps(shaper.role_chunk()) + b"\n\n")
            while True:
                em = await req.out.get()
                await resp.write(b"data: " + orjson.dumps(shaper.content_chunk(em)) + b"\n\n")
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


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


async def warm_up(server: SimServer) -> None:
    """SGLang's warmup: one short generate request, then readiness. /health answers 503 until this returns."""
    log = server.log
    if not server.a.server.get("skip_server_warmup"):
        log.line('INFO:     127.0.0.1:0 - "GET /model_info HTTP/1.1" 200 OK')
        req = server.engine.submit(GenParams(prompt="The capital city of France is", max_tokens=1, temperature=0.0,
                                             ignore_eos=False))
        while not req.done:
            await req.out.get()
        log.line('INFO:     127.0.0.1:0 - "POST /generate HTTP/1.1" 200 OK')
    server.status = ServerStatus.UP
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
    server = SimServer(a, plan, log, startup_s=(time.monotonic() - began) * a.time_scale)
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
        log.line("Received sigquit from a child process. It usually means the child failed.", important=True)
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
