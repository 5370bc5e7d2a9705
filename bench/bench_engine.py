"""How much client CPU does the benchmark engine spend per streamed chunk?

Starts a minimal, fast SSE server (raw asyncio, chunked encoding, one event per write, a yield to the
loop between events like a real decode step) in a separate process on 127.0.0.1, then, at
concurrency 1, 16 and 64, with the same request and chunk counts on both sides, measures in this process:
  - the engine (`run_benchmark`, on its own thread or, with --isolation process, in a spawned
    process; full bookkeeping), and
  - a minimal raw-aiohttp reader (split events, orjson.loads each, nothing else).
Per chunk: process CPU of the streaming phase (first request sent -> last ended) / chunks, on both
sides. The engine's per-level fixed costs (thread and loop start, session, server probes, statistics
over all tokens) are printed apart, and so is the total-CPU ratio.
Targets: >= 60k chunks/s at c=64 on one core (<= 16.7 us CPU per chunk) and >= 0.8x the raw reader.

    python bench/bench_engine.py [--events 256] [--levels 1,16,64] [--repeat 3] [--isolation thread,process]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import aiohttp
import orjson

from specdec_tui.bench import RunDone, run_benchmark
from specdec_tui.bench import drive as bench_drive
from specdec_tui.core.config import BenchProfile

LEVEL_REQUESTS = {1: 48, 16: 256, 64: 512}


# ---------------------------------------------------------------- server (child process)


def build_events(n: int) -> list[bytes]:
    out = []
    for i in range(1, n + 1):
        obj = {
            "id": "bench",
            "object": "text_completion",
            "choices": [{"index": 0, "text": f" word{i}", "finish_reason": "length" if i == n else None}],
            "usage": {"prompt_tokens": 12, "completion_tokens": i, "total_tokens": 12 + i},
        }
        data = b"data: " + orjson.dumps(obj) + b"\n\n"
        out.append(b"%x\r\n%s\r\n" % (len(data), data))
    final = b"data: " + orjson.dumps({"id": "bench", "choices": [], "usage": {"completion_tokens": n}}) + b"\n\n"
    done = b"data: [DONE]\n\n"
    out.append(b"%x\r\n%s\r\n" % (len(final), final))
    out.append(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
    return out


STREAM_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


class SseServer(asyncio.Protocol):
    events: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, _, rest = self.buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if len(rest) < length:
                return
            self.buf = rest[length:]
            if head.startswith(b"POST"):
                asyncio.ensure_future(self.stream())
            else:
                self.transport.write(NOT_FOUND)

    async def stream(self) -> None:
        t = self.transport
        t.write(STREAM_HEAD)
        for ev in self.events:
            if t.is_closing():
                return
            t.write(ev)
            await asyncio.sleep(0)


def serve(n_events: int) -> None:
    SseServer.events = build_events(n_events)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(SseServer, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())


# ---------------------------------------------------------------- clients (this process)


class PhaseClock:
    """Process CPU time at the start and end of each level's streaming phase (first request sent →
    last request ended). Everything else a side spends is its fixed cost for the level."""

    def __init__(self) -> None:
        self.start = self.end = 0.0

    def __call__(self, phase: str, _concurrency: int = 0) -> None:
        if phase == "stream_start":
            self.start = time.process_time()
        else:
            self.end = time.process_time()

    @property
    def stream_cpu(self) -> float:
        return self.end - self.start


async def raw_aiohttp(url: str, concurrency: int, requests: int, n_events: int, clock: PhaseClock) -> int:
    body = orjson.dumps({"model": "bench", "prompt": "hi", "stream": True, "max_tokens": n_events})
    chunks = 0
    left = requests
    conn = aiohttp.TCPConnector(limit=concurrency + 8)
    async with aiohttp.ClientSession(connector=conn) as session:

        async def worker() -> None:
            nonlocal chunks, left
            while left > 0:
                left -= 1
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                    buf = b""
                    async for data in resp.content.iter_any():
                        time.perf_counter_ns()
                        buf += data
                        *events, buf = buf.split(b"\n\n")
                        for ev in events:
                            payload = ev[6:]
                            if payload != b"[DONE]" and orjson.loads(payload)["choices"]:
                                chunks += 1

        clock("stream_start")
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        clock("stream_end")
    return chunks


async def engine(url: str, concurrency: int, requests: int, n_events: int, isolation: str, clock: PhaseClock) -> int:
    base_url = url.rsplit("/v1/", 1)[0]
    prof = BenchProfile(concurrency=(concurrency,), requests=requests, warmup=0, max_tokens=n_events)
    bench_drive.PHASE_HOOK = clock  # seen by the engine thread; a spawned process has its own module
    try:
        async for ev in run_benchmark(base_url, prof, model="bench", isolation=isolation):
            if isinstance(ev, RunDone):
                assert ev.error is None and ev.levels, ev
                lv = ev.levels[0]
                assert lv.errors == 0 and lv.output_tokens == requests * n_events, lv
                return lv.output_tokens  # one token per chunk on this server
    finally:
        bench_drive.PHASE_HOOK = None
    raise RuntimeError("no result")


@dataclass
class Sample:
    chunks: int
    wall_s: float
    cpu_s: float  # this process and its finished children (a spawned engine process)
    stream_cpu_s: float | None  # the streaming phase alone (None: not observable, e.g. in a child)

    @property
    def us_per_chunk(self) -> float:
        return (self.stream_cpu_s if self.stream_cpu_s is not None else self.cpu_s) / self.chunks * 1e6

    @property
    def fixed_ms(self) -> float | None:
        return None if self.stream_cpu_s is None else (self.cpu_s - self.stream_cpu_s) * 1e3


def cpu_now() -> float:
    """This process's CPU (ns resolution) plus its waited-for children's (a spawned engine process)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def measure(fn, *args) -> Sample:  # type: ignore[no-untyped-def]
    clock = PhaseClock()
    cpu0, wall0 = cpu_now(), time.perf_counter()
    chunks = asyncio.run(fn(*args, clock))
    wall, cpu = time.perf_counter() - wall0, cpu_now() - cpu0
    stream = clock.stream_cpu if clock.end else None
    return Sample(chunks, wall, cpu, stream)


def median_sample(samples: list[Sample]) -> Sample:
    return sorted(samples, key=lambda s: s.us_per_chunk)[len(samples) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=256, help="content chunks per request")
    ap.add_argument("--levels", default="1,16,64")
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader and level (median reported)")
    ap.add_argument("--isolation", default="thread", help="engine modes to measure: thread, process or both")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.events)
        return 0
    modes = [m.strip() for m in args.isolation.split(",") if m.strip()]
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--events", str(args.events)], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/v1/completions"
        print(f"server pid {server.pid}, {args.events} chunks per request, client pid {os.getpid()}, "
              f"median of {args.repeat} runs")
        print("µs/chunk = process CPU of the streaming phase (first request sent → last ended) / chunks, the same")
        print("phase on both sides; fixed = the rest of the level's CPU (engine: thread and loop start, session,")
        print("server probes before/after, statistics over all tokens; raw: session open/close). A spawned")
        print("engine's phases are not visible from here: its µs/chunk is total CPU (spawn included) / chunks.")
        head = (f"{'c':>3} {'reader':<15} {'chunks':>7} {'wall s':>7} {'chunks/s':>9} {'µs/chunk':>9} {'fixed ms':>9} "
                f"{'ratio raw/eng':>14} {'total ratio':>12}")
        print(head)
        for c in (int(x) for x in args.levels.split(",")):
            n = LEVEL_REQUESTS.get(c, 4 * c)
            runs: dict[str, list[Sample]] = {"raw": [], **{f"engine/{m}": [] for m in modes}}
            for _ in range(args.repeat):  # interleaved so a burst of load elsewhere hits both sides
                runs["raw"].append(measure(raw_aiohttp, url, c, n, args.events))
                for m in modes:
                    runs[f"engine/{m}"].append(measure(engine, url, c, n, args.events, m))
            raw = median_sample(runs["raw"])
            for name, samples in runs.items():
                s = median_sample(samples)
                fixed = f"{s.fixed_ms:.1f}" if s.fixed_ms is not None else "–"
                ratio = f"{raw.us_per_chunk / s.us_per_chunk:.2f}" if name != "raw" and s.stream_cpu_s is not None else ""
                total = f"{raw.cpu_s / s.cpu_s:.2f}" if name != "raw" else ""
                print(f"{c:>3} {name:<15} {s.chunks:>7} {s.wall_s:>7.2f} {s.chunks / s.wall_s:>9.0f} "
                      f"{s.us_per_chunk:>9.2f} {fixed:>9} {ratio:>14} {total:>12}", flush=True)
    finally:
        server.terminate()
        server.wait(5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
