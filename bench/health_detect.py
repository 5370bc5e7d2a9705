"""Health detection latency: from the server becoming ready to a restart's wait (`HealthWatch.wait_ready`, what the
panel and `host restart` run after a push) returning READY; the panel's view reads the same probe.

A small aiohttp server runs on its own thread and event loop (so the watcher's loop cannot delay the
flip) and turns ready at a random moment, recording `time.monotonic()` of the flip. Two ways to turn
ready, both seen on real SGLang hosts:
  health  /health answers 503 until the flip, then 200 (a proxy or an older SGLang in front);
  bind    nothing listens on the port until the flip (SGLang binds only once the model is loaded).
The latency is the monotonic time at which the wait returns READY minus the flip time. (A watch nobody waits on
polls once a second while not ready, every 5 s once ready: it is not what a restart waits on.)

    python bench/health_detect.py              # 40 runs of each mode
    python bench/health_detect.py --runs 100 --mode bind
Target: p99 ≤ 250 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import statistics
import threading
import time

from aiohttp import web

from specdec_tui.loop.health import HealthState, HealthWatch


class FlippingServer:
    """An SGLang-shaped server on 127.0.0.1 that turns ready when `flip()` is called (thread-safe)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.port = _free_port()
        self.ready = False
        self.flipped_at = 0.0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _app(self) -> web.Application:
        async def health(_request: web.Request) -> web.Response:
            return web.Response(status=200 if self.ready else 503)

        async def models(_request: web.Request) -> web.Response:
            return web.json_response({"data": [{"id": "bench-model", "max_model_len": 32768}]})

        async def info(_request: web.Request) -> web.Response:
            return web.json_response({"model_path": "bench-model", "max_total_num_tokens": 100000})

        app = web.Application()
        app.router.add_get("/health", health)
        app.router.add_get("/v1/models", models)
        app.router.add_get("/get_server_info", info)
        return app

    def _call(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _listen(self) -> None:
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await self._site.start()

    async def _setup(self) -> None:
        self._runner = web.AppRunner(self._app())
        await self._runner.setup()
        if self.mode == "health":
            await self._listen()

    async def _flip(self) -> None:
        if self.mode == "bind":
            await self._listen()
        self.flipped_at = time.monotonic()  # the moment a probe could first see READY
        self.ready = True

    def start(self) -> FlippingServer:
        self._thread.start()
        self._call(self._setup())
        return self

    def flip(self) -> float:
        self._call(self._flip())
        return self.flipped_at

    def stop(self) -> None:
        if self._runner is not None:
            self._call(self._runner.cleanup())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def one_run(mode: str, rng: random.Random) -> float:
    """Seconds from the flip to READY for one fresh server and one fresh restart's wait."""
    server = FlippingServer(mode).start()
    try:
        watch = HealthWatch(None, server.base_url)
        waiting = asyncio.create_task(watch.wait_ready(timeout_s=30))
        delay = rng.uniform(0.05, 0.3)  # the flip lands anywhere in the poll cycle
        await asyncio.get_running_loop().run_in_executor(None, lambda: (time.sleep(delay), server.flip()))
        snap = await waiting
        seen = time.monotonic()
        assert snap.state is HealthState.READY
        return seen - server.flipped_at
    finally:
        server.stop()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--mode", choices=["health", "bind", "both"], default="both")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    modes = ["health", "bind"] if args.mode == "both" else [args.mode]
    print(f"health detection: flip → a restart's wait (HealthWatch.wait_ready) returns READY, {args.runs} runs per mode "
          "(target p99 ≤ 250 ms)")
    for mode in modes:
        lat = [await one_run(mode, rng) for _ in range(args.runs)]
        ms = [v * 1000 for v in lat]
        verdict = "OK" if pct(ms, 99) <= 250 else "OVER TARGET"
        print(f"  {mode:6s}  p50 {pct(ms, 50):6.1f} ms   p99 {pct(ms, 99):6.1f} ms   max {max(ms):6.1f} ms   "
              f"mean {statistics.fmean(ms):6.1f} ms   {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
