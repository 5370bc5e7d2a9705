"""How long the simulator's /health says 503 ("warming up") after its port opens, beside what upstream's takes.

SGLang 0.5.23's warm-up (http_server.py `_execute_server_warmup`) sleeps a second, asks /model_info, then sends
one greedy /generate of 8 tokens; /health answers 503 until that generate returns. The anchor is measured in the
same run on the same server: 1 s plus the time an identical 8-token greedy /generate takes once it is ready.

    python bench/warmup_window.py                 # time scale 1, 3 starts
    python bench/warmup_window.py --time-scale 4 --runs 5
Target: the window is at least 0.5 s at time scale 1 (so the panel's "warming up" can be seen) and within 20 % of
the anchor; it scales as 1 / time scale like every other sim timing.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time

import aiohttp

UPSTREAM_WAIT_S = 1.0
SEED = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--mem-fraction-static", "0.85",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def one_start(time_scale: float) -> tuple[float, float]:
    """(503 window from the first answer to the first 200, one 8-token greedy /generate once ready), seconds."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "specdec_tui.sim", *SEED, "--host", "127.0.0.1", "--port", str(port),
                             "--time-scale", str(time_scale), "--load-seconds", "0.2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first_503: float | None = None
        async with aiohttp.ClientSession() as s:
            while True:
                try:
                    async with s.get(url + "/health") as r:
                        now = time.monotonic()
                        if r.status == 503 and first_503 is None:
                            first_503 = now
                        if r.status == 200 and first_503 is not None:
                            window = now - first_503
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.005)
            body = {"text": "The capital city of France is", "sampling_params": {"temperature": 0, "max_new_tokens": 8}}
            began = time.monotonic()
            async with s.post(url + "/generate", json=body) as r:
                await r.read()
            generate = time.monotonic() - began
        return window, generate
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    ok = True
    for run in range(1, args.runs + 1):
        window, generate = asyncio.run(one_start(args.time_scale))
        anchor = UPSTREAM_WAIT_S / args.time_scale + generate
        good = abs(window / anchor - 1) <= 0.2 and (args.time_scale != 1.0 or window >= 0.5)
        ok &= good
        print(f"run {run}: warming-up window {window:.3f} s   anchor (1 s / scale + 8-token generate "
              f"{generate:.3f} s) {anchor:.3f} s   {'ok' if good else 'OFF'}")
    print("target met" if ok else "target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
