"""How much client CPU does the benchmark engine spend per streamed chunk?

Starts a minimal, fast SSE server (raw asyncio, chunked encoding, one event per write, a yield to the
loop between events like a real decode step) in a separate process on 127.0.0.1, then, at
concurrency 1, 16 and 64, measures in this process:
  - the engine (`run_benchmark`, on its own thread, full bookkeeping), and
  - a minimal raw-aiohttp reader (split events, orjson.loads each, nothing else),
and prints chunks/s, µs of process CPU per chunk, and the engine/raw ratio (of CPU per chunk).
Targets: ≥ 60k chunks/s at c=64 on one core (i.e. ≤ 16.7 µs CPU per chunk) and ≥ 0.8× the raw reader.

    python bench/bench_engine.py [--events 256] [--levels 1,16,64]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time

import orjson

LEVEL_REQUESTS = {1: 24, 16: 64, 64: 192}


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


async def raw_aiohttp(url: str, concurrency: int, requests: int, body: bytes) -> int:
    import aiohttp

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

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return chunks


async def engine(base_url: str, concurrency: int, requests: int, n_events: int) -> int:
    from specdec_tui.bench import RunDone, run_benchmark
    from specdec_tui.core.config import BenchProfile

    prof = BenchProfile(concurrency=(concurrency,), requests=requests, warmup=0, max_tokens=n_events)
    async for ev in run_benchmark(base_url, prof, model="bench"):
        if isinstance(ev, RunDone):
            lv = ev.levels[0]
            assert lv.errors == 0 and lv.output_tokens == requests * n_events, lv
            return lv.output_tokens  # one token per chunk on this server
    raise RuntimeError("no result")


def measure(fn, *args) -> tuple[int, float, float]:  # type: ignore[no-untyped-def]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    chunks = asyncio.run(fn(*args))
    return chunks, time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=256, help="content chunks per request")
    ap.add_argument("--levels", default="1,16,64")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.events)
        return 0
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--events", str(args.events)], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        base_url = f"http://127.0.0.1:{port}"
        body = orjson.dumps({"model": "bench", "prompt": "hi", "stream": True, "max_tokens": args.events})
        print(f"server pid {server.pid}, {args.events} chunks per request, client pid {os.getpid()}")
        print(f"{'c':>3} {'reader':<8} {'chunks':>7} {'wall s':>7} {'chunks/s':>9} {'µs CPU/chunk':>13} {'CPU ratio raw/engine':>21}")
        for c in (int(x) for x in args.levels.split(",")):
            n = LEVEL_REQUESTS.get(c, 4 * c)
            raw = measure(raw_aiohttp, base_url + "/v1/completions", c, n, body)
            eng = measure(engine, base_url, c, n, args.events)
            us_raw = raw[2] / raw[0] * 1e6
            us_eng = eng[2] / eng[0] * 1e6
            for name, (chunks, wall, _cpu), us in (("raw", raw, us_raw), ("engine", eng, us_eng)):
                ratio = f"{us_raw / us_eng:.2f}" if name == "engine" else ""
                print(f"{c:>3} {name:<8} {chunks:>7} {wall:>7.2f} {chunks / wall:>9.0f} {us:>13.1f} {ratio:>21}")
    finally:
        server.terminate()
        server.wait(5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
