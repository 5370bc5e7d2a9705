"""How noisy is the "fine scan" that `bench --find-max-rate` is judged against, and where does the bisection land?

Starts the simulator as tests/test_rate_search.py does (5× time scale, 4 running at most, 48 tokens, ttft_p90=150ms,
80 measured requests per level, seed 1), then, `--scans` times, runs EVERY rate of a 0.5 requests/s grid (no stop at
the first miss) and, `--searches` times, the bisection itself. Prints each rate's met count over the scans (the mixed
zone is the scan's own noise), each scan's boundary two ways — its first miss (what the old test used: biased low,
any noisy miss stops it) and the threshold with the fewest verdicts on the wrong side (`scan_crossing`) — and each
bisection's answer beside them. Anchor: the fine scan's crossing over all scans; target: the bisection within ±5 %
in ≤ 6 probes.

    python bench/rate_search_noise.py [--scans 3] [--searches 3] [--lo 15] [--hi 25]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import statistics
import subprocess
import sys

import aiohttp
from sim_ready import free_port, wait_healthy

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.bench.rate_search import find_max_rate, met, scan_crossing
from specdec_tui.core.config import BenchProfile

SLO = "ttft_p90=150ms"
PROFILE = BenchProfile(requests=80, warmup=10, cooldown=10, max_tokens=48, ignore_eos=True, slo=(SLO,), seed=1)


def start_sim(port: int) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "specdec_tui.sim", "--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4",
            "--trust-remote-code", "--mem-fraction-static", "0.85", "--speculative-algorithm", "NEXTN",
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
            "--time-scale", "5", "--load-seconds", "1", "--max-running-requests", "4",
            "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)


async def wait_ready(url: str) -> None:
    async with aiohttp.ClientSession() as s:
        await wait_healthy(s, url, timeout_s=60, every_s=0.2)


async def verdict(url: str, rate: float) -> bool:
    events: list[BenchEvent] = []
    await drive_benchmark(url, dataclasses.replace(PROFILE, rate=rate), events.append)
    done = events[-1]
    assert isinstance(done, RunDone) and done.error is None, done
    return met(done.levels[0])


def first_miss(grid: list[float], verdicts: list[bool]) -> float:
    """The old test's boundary: between the last rate met before the first miss and that miss."""
    for i, ok in enumerate(verdicts):
        if not ok:
            return math.sqrt(grid[i - 1] * grid[i]) if i else grid[0]
    return grid[-1]


async def main_async(args: argparse.Namespace) -> None:
    port = free_port()
    proc = start_sim(port)
    url = f"http://127.0.0.1:{port}"
    try:
        await wait_ready(url)
        grid = [args.lo + 0.5 * i for i in range(int((args.hi - args.lo) / 0.5) + 1)]
        scans: list[list[bool]] = []
        searches: list[tuple[float | None, int]] = []
        for k in range(max(args.scans, args.searches)):  # interleaved: a burst of load elsewhere hits both
            if k < args.scans:
                row = [await verdict(url, r) for r in grid]
                scans.append(row)
                print(f"scan {k + 1}: first miss {first_miss(grid, row):.2f}, crossing {scan_crossing(grid, [row]):.2f}  "
                      + "".join("+" if ok else "." for ok in row), flush=True)
            if k < args.searches:
                res = await find_max_rate(url, dataclasses.replace(PROFILE, rate=40.0), lambda ev: None)
                searches.append((res.max_rate, len(res.probes)))
                print(f"bisection {k + 1}: {res.max_rate and round(res.max_rate, 2)} req/s in {len(res.probes)} probes "
                      f"(rates {', '.join(f'{p.rate:.2f}' + ('+' if p.met else '.') for p in res.probes)})", flush=True)
        print("\nrate   met/scans")
        for i, r in enumerate(grid):
            print(f"{r:5.1f}  {sum(row[i] for row in scans)}/{len(scans)}")
        anchor = scan_crossing(grid, scans)
        firsts = [first_miss(grid, row) for row in scans]
        each = [scan_crossing(grid, [row]) for row in scans]
        print(f"\nanchor: fine-scan crossing over {len(scans)} scans = {anchor:.2f} req/s")
        print(f"one scan's crossing: {', '.join(f'{x:.2f}' for x in each)} (spread {min(each) / anchor - 1:+.1%} .. "
              f"{max(each) / anchor - 1:+.1%})")
        print(f"one scan's first miss (the old truth): {', '.join(f'{x:.2f}' for x in firsts)} "
              f"(spread {min(firsts) / anchor - 1:+.1%} .. {max(firsts) / anchor - 1:+.1%})")
        answers = [a for a, _ in searches if a is not None]
        if answers:
            print(f"bisection: {', '.join(f'{a:.2f}' for a in answers)} req/s, median {statistics.median(answers):.2f}; "
                  f"error against the anchor {', '.join(f'{a / anchor - 1:+.1%}' for a in answers)} (target ±5 %); "
                  f"probes {', '.join(str(n) for _, n in searches)} (target ≤ 6)")
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scans", type=int, default=3)
    ap.add_argument("--searches", type=int, default=3)
    ap.add_argument("--lo", type=float, default=15.0)
    ap.add_argument("--hi", type=float, default=25.0)
    asyncio.run(main_async(ap.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
