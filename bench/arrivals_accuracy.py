"""Do open-loop requests reach the server when they should? Poisson rate and trace replay, measured at the server.

A minimal streaming server on 127.0.0.1 (aiohttp, one token per request) logs each request's arrival time. Then:
  1. Poisson: the engine (`drive_benchmark`) at --rate requests/s for --requests measured (+ warm-up/cool-down
     50 each, not counted): the rate the server saw over the measured arrivals, beside the target (anchor: the
     schedule's own rate, n-1 over its span, which is the target by construction). Target: within ±3 %.
  2. Trace replay: a bursty recorded trace (--trace-requests entries: steady, bursts at one instant, silences)
     replayed by the engine; each arrival's error against the trace's offset (p50/p99/max), beside the same
     schedule sent by a bare asyncio + aiohttp loop in the same run (the anchor: what the loop and the loopback
     cost any client).

    python bench/arrivals_accuracy.py [--rate 250] [--requests 2000] [--trace-requests 1000] [--seed 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from aiohttp import web

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import RunDone
from specdec_tui.bench.workloads import load_workload
from specdec_tui.core.config import BenchProfile

EDGE = 50  # warm-up and cool-down arrivals around the measured ones


class Server:
    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str]] = []

    async def completions(self, request: web.Request) -> web.StreamResponse:
        t = time.perf_counter()
        body = orjson.loads(await request.read())
        self.arrivals.append((t, str(body.get("prompt", ""))))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        chunk = {"choices": [{"index": 0, "text": "x", "finish_reason": "length"}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\ndata: [DONE]\n\n")
        return resp

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "m"}]})

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_get("/v1/models", self.models)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]


def trace_lines(n: int, seed: int) -> list[dict[str, object]]:
    """Steady stretches at 100/s, bursts of 8 at one instant, silences of 0.5 s: a trace no rate describes."""
    rng = random.Random(seed)
    t, out = 0.0, []
    while len(out) < n:
        kind = rng.choice(("steady", "burst", "silence"))
        if kind == "steady":
            for _ in range(40):
                t += rng.expovariate(100.0)
                out.append(t)
        elif kind == "burst":
            t += 0.05
            out.extend([t] * 8)
        else:
            t += 0.5
    return [{"arrival_s": round(x, 6), "input_len": 8, "output_len": 1} for x in out[:n]]


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


async def bare_replay(url: str, offsets: tuple[float, ...], prompts: list[str]) -> None:
    """The anchor: the same schedule sent by a bare loop (sleep until due, fire a task), nothing else."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=2048)) as s:

        async def one(prompt: str) -> None:
            async with s.post(url + "/v1/completions", json={"prompt": prompt, "max_tokens": 1, "stream": True}) as r:
                await r.read()

        t0 = time.perf_counter()
        async with asyncio.TaskGroup() as tg:
            for off, prompt in zip(offsets, prompts, strict=True):
                if (wait := t0 + off - time.perf_counter()) > 0:
                    await asyncio.sleep(wait)
                tg.create_task(one(prompt))


def errors_ms(arrivals: list[tuple[float, str]], offsets: tuple[float, ...], prompts: list[str]) -> list[float]:
    seen = {p: t for t, p in arrivals}
    times = [seen[p] for p in prompts]
    shift = min(t - o for t, o in zip(times, offsets, strict=True))  # the first request's own send cost
    return [abs((t - shift) - o) * 1e3 for t, o in zip(times, offsets, strict=True)]


async def main_async(args: argparse.Namespace) -> None:
    server = Server()
    url = await server.start()
    try:
        prof = BenchProfile(rate=args.rate, requests=args.requests, warmup=EDGE, cooldown=EDGE, max_tokens=1,
                            seed=args.seed)
        events: list[object] = []
        await drive_benchmark(url, prof, events.append)
        assert isinstance(events[-1], RunDone) and events[-1].error is None, events[-1]
        measured = sorted(t for t, _ in server.arrivals)[EDGE:EDGE + args.requests]
        seen = (len(measured) - 1) / (measured[-1] - measured[0])
        print(f"Poisson, {args.requests} measured requests (+{EDGE} warm-up, +{EDGE} cool-down), seed {args.seed}:")
        print(f"  target {args.rate:g}/s (anchor: the schedule's own rate, the target by construction); the server "
              f"saw {seen:.2f}/s: {seen / args.rate - 1:+.2%} (target ±3 %)")

        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "trace.jsonl"
            f.write_text("".join(json.dumps(x) + "\n" for x in trace_lines(args.trace_requests, args.seed)))
            wl = load_workload(str(f))
            prompts = [item.as_prompt() for item in wl.items]
            server.arrivals.clear()
            await drive_benchmark(url, BenchProfile(workload=str(f), warmup=0, max_tokens=1), lambda ev: None)
            engine = errors_ms(server.arrivals, wl.arrivals, prompts)
            server.arrivals.clear()
            await bare_replay(url, wl.arrivals, prompts)
            bare = errors_ms(server.arrivals, wl.arrivals, prompts)
        print(f"trace replay, {len(prompts)} requests over {wl.arrivals[-1]:.1f} s (bursts of 8 at one instant, "
              f"0.5 s silences): arrival error against the trace, ms")
        for name, e in (("engine", engine), ("bare loop (anchor)", bare)):
            print(f"  {name:<19} p50 {pct(e, 0.5):6.2f}  p99 {pct(e, 0.99):6.2f}  max {max(e):6.2f}")
    finally:
        await server.runner.cleanup()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=250.0)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--trace-requests", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=3)
    asyncio.run(main_async(ap.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
