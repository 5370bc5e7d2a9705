"""How much client CPU does the benchmark engine spend per streamed chunk, and how much latency does it add?

Part 1, CPU per chunk: a minimal fast SSE server (raw asyncio, chunked encoding, one event per write, a yield to
the loop between events) in another process on 127.0.0.1; at each concurrency (default 1, 16, 64, 256), the same
requests and chunks for the engine (`run_benchmark` on its thread or, --isolation process, a spawned process;
full bookkeeping) and for the anchor, a minimal raw-aiohttp reader (split events, orjson.loads each). Per chunk:
process CPU of the streaming phase (first request sent -> last ended) / chunks; engine/raw over interleaved runs,
median and spread (target <= 1.05x at c=256). Fixed per-level costs and the total-CPU ratio are printed apart.

Part 2, added inter-token latency: a server paces --itl-rate chunks/s over --itl-concurrency streams and writes
into each chunk when it wrote it (perf_counter_ns: CLOCK_MONOTONIC, shared by both processes). A reader's stamp
minus that is the chunk's delay; the change of delay from one chunk to the next is what the reader (and the
kernel and loop under it) added to that inter-token gap. Delay and added-ITL p50/p99 for the engine beside the
raw reader in the same run (the anchor: what no client avoids). Target: engine added ITL p99 < 1 ms at 20,000/s.

    python bench/bench_engine.py [--levels 1,16,64,256] [--repeat 3] [--isolation thread,process]
                                 [--itl-rate 20000] [--itl-concurrency 64] [--no-itl] [--no-cpu]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import aiohttp
import orjson

from specdec_tui.bench import RunDone, run_benchmark
from specdec_tui.bench import drive as bench_drive
from specdec_tui.bench.client import RequestRecord
from specdec_tui.core.config import BenchProfile

LEVEL_REQUESTS = {1: 48, 16: 256, 64: 512, 256: 1024}
ITL_EVENTS = 200  # chunks per request in part 2: their texts (the write times) fit the engine's kept-text sample


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


def paced_event(i: int, n: int) -> bytes:
    """Chunk `i` of `n`, its text the time it is written (ns): what the readers measure their delay against."""
    obj = {"id": "bench", "object": "text_completion",
           "choices": [{"index": 0, "text": f" t{time.perf_counter_ns()}", "finish_reason": "length" if i == n else None}],
           "usage": {"prompt_tokens": 12, "completion_tokens": i, "total_tokens": 12 + i}}
    data = b"data: " + orjson.dumps(obj) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


class PacedSseServer(SseServer):
    """Each stream writes one chunk every `gap_s` from a random phase (the total rate spread evenly in time)."""

    gap_s = 0.0
    n_events = ITL_EVENTS

    async def stream(self) -> None:
        t = self.transport
        t.write(STREAM_HEAD)
        t0 = time.perf_counter() + random.uniform(0.0, self.gap_s)
        for i in range(1, self.n_events + 1):
            if (wait := t0 + i * self.gap_s - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            if t.is_closing():
                return
            t.write(paced_event(i, self.n_events))
        t.writelines(build_events(self.n_events)[-2:])  # the usage-only chunk and [DONE]


def serve(n_events: int, gap_s: float = 0.0) -> None:
    SseServer.events = build_events(n_events)
    PacedSseServer.gap_s, PacedSseServer.n_events = gap_s, n_events
    factory = PacedSseServer if gap_s > 0 else SseServer

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(factory, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())


# ---------------------------------------------------------------- clients (this process)


class PhaseClock:
    """Process CPU time at the start and end of a level's streaming phase (first request sent → last ended)."""

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


def cpu_now() -> float:  # this process's CPU and its waited-for children's (a spawned engine)
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


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


# ---------------------------------------------------------------- part 2: added inter-token latency


async def raw_itl(url: str, concurrency: int, requests: int) -> list[list[tuple[int, int]]]:
    """The anchor reader: (arrival stamp, write time) of every chunk, per request."""
    body = orjson.dumps({"model": "bench", "prompt": "hi", "stream": True, "max_tokens": ITL_EVENTS})
    out: list[list[tuple[int, int]]] = []
    left = requests
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency + 8)) as session:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                pairs: list[tuple[int, int]] = []
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                    buf = b""
                    async for data in resp.content.iter_any():
                        t = time.perf_counter_ns()
                        buf += data
                        *events, buf = buf.split(b"\n\n")
                        for ev in events:
                            payload = ev[6:]
                            if payload != b"[DONE]" and (choices := orjson.loads(payload)["choices"]):
                                pairs.append((t, int(choices[0]["text"][2:])))
                out.append(pairs)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


async def engine_itl(url: str, concurrency: int, requests: int) -> list[list[tuple[int, int]]]:
    """The engine's own stamps (`RequestRecord.times`) beside the texts it kept (every request's, here)."""
    records: list[RequestRecord] = []
    original = bench_drive.stream_request

    async def keep(session, url, body, chat, rec, *args):  # type: ignore[no-untyped-def]
        rec.keep_text = True  # the engine's sampled-request path, for every request
        records.append(await original(session, url, body, chat, rec, *args))
        return rec

    bench_drive.stream_request = keep  # type: ignore[assignment]
    try:
        await engine(url, concurrency, requests, ITL_EVENTS, "thread", PhaseClock())
    finally:
        bench_drive.stream_request = original
    out = []
    for rec in records:
        assert len(rec.text_parts) == len(rec.times) == ITL_EVENTS, (len(rec.text_parts), len(rec.times))
        out.append([(t, int(text[2:])) for t, text in zip(rec.times, rec.text_parts, strict=True)])
    return out


def itl_figures(streams: list[list[tuple[int, int]]]) -> dict[str, float]:
    """Delay and added ITL p50/p99 (ms); the ITL p99 the reader saw beside the one the server wrote."""
    delay, added, seen, wrote = [], [], [], []
    for pairs in streams:
        for (t0, w0), (t1, w1) in zip(pairs, pairs[1:], strict=False):
            added.append(((t1 - w1) - (t0 - w0)) / 1e6)
            seen.append((t1 - t0) / 1e6)
            wrote.append((w1 - w0) / 1e6)
        delay.extend((t - w) / 1e6 for t, w in pairs)
    return {"delay p50": pct(delay, 0.5), "delay p99": pct(delay, 0.99), "added p50": pct(added, 0.5),
            "added p99": pct(added, 0.99), "ITL p99 seen": pct(seen, 0.99), "ITL p99 written": pct(wrote, 0.99),
            "chunks": float(len(delay))}


def run_itl(rate: float, concurrency: int, repeat: int) -> None:
    gap = concurrency / rate
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--events", str(ITL_EVENTS), "--gap", repr(gap)],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1/completions"  # type: ignore[union-attr]
        requests = 4 * concurrency
        print(f"\nadded inter-token latency: {rate:,.0f} chunks/s over {concurrency} streams (one chunk every "
              f"{gap * 1e3:.1f} ms each), {requests} requests of {ITL_EVENTS} chunks per run, {repeat} runs interleaved")
        runs: dict[str, list[dict[str, float]]] = {"raw (anchor)": [], "engine/thread": []}
        for _ in range(repeat):
            runs["raw (anchor)"].append(itl_figures(asyncio.run(raw_itl(url, concurrency, requests))))
            runs["engine/thread"].append(itl_figures(asyncio.run(engine_itl(url, concurrency, requests))))
        keys = ("delay p50", "delay p99", "added p50", "added p99", "ITL p99 seen", "ITL p99 written")
        print(f"{'reader':<14} " + " ".join(f"{k + ' ms':>17}" for k in keys) + "   (median of runs; added p99 per run)")
        for name, figs in runs.items():
            per_run = ", ".join(f"{f['added p99']:.3f}" for f in figs)
            print(f"{name:<14} " + " ".join(f"{statistics.median(f[k] for f in figs):>17.3f}" for k in keys)
                  + f"   [{per_run}]")
        eng = statistics.median(f["added p99"] for f in runs["engine/thread"])
        raw = statistics.median(f["added p99"] for f in runs["raw (anchor)"])
        print(f"engine added ITL p99 {eng:.3f} ms (target < 1 ms) beside the raw reader's {raw:.3f} ms in the same run")
    finally:
        server.terminate()
        server.wait(5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=256, help="content chunks per request")
    ap.add_argument("--levels", default="1,16,64,256")
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader and level (median reported)")
    ap.add_argument("--isolation", default="thread", help="engine modes to measure: thread, process or both")
    ap.add_argument("--itl-rate", type=float, default=20000.0)
    ap.add_argument("--itl-concurrency", type=int, default=64)
    for flag in ("--no-itl", "--no-cpu", "--serve"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("--gap", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.events, args.gap)
        return 0
    if not args.no_cpu:
        run_cpu(args)
    if not args.no_itl:
        run_itl(args.itl_rate, args.itl_concurrency, args.repeat)
    return 0


def run_cpu(args: argparse.Namespace) -> None:
    modes = [m.strip() for m in args.isolation.split(",") if m.strip()]
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--events", str(args.events)], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/v1/completions"
        print(f"server pid {server.pid}, {args.events} chunks per request, client pid {os.getpid()}, "
              f"median of {args.repeat} runs")
        print("µs/chunk: CPU of the streaming phase / chunks (a spawned engine: total CPU / chunks); fixed: the rest of")
        print("the level's CPU; engine/raw: over the raw reader's run beside it, median (min..max); target ≤ 1.05 at c=256")
        print(f"{'c':>3} {'reader':<15} {'chunks':>7} {'wall s':>7} {'chunks/s':>9} {'µs/chunk':>9} {'fixed ms':>9} "
              f"{'engine/raw':>11} {'(min..max)':>12} {'total ratio':>12}")
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
                ratio = spread = ""
                if name != "raw" and s.stream_cpu_s is not None:
                    pairs = sorted(e.us_per_chunk / r.us_per_chunk for e, r in zip(samples, runs["raw"], strict=True))
                    ratio, spread = f"{statistics.median(pairs):.3f}", f"{pairs[0]:.2f}..{pairs[-1]:.2f}"
                total = f"{s.cpu_s / raw.cpu_s:.2f}" if name != "raw" else ""
                print(f"{c:>3} {name:<15} {s.chunks:>7} {s.wall_s:>7.2f} {s.chunks / s.wall_s:>9.0f} "
                      f"{s.us_per_chunk:>9.2f} {fixed:>9} {ratio:>11} {spread:>12} {total:>12}", flush=True)
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    raise SystemExit(main())
