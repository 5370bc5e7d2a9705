"""`bench --find-max-rate` (issue 33) against the real simulator process: the bisection lands within ±5 % of
the boundary a fine scan of the same server finds, in ≤ 6 probes, names the saturation it met, and with
--json ends on {"max_rate", "probes", "saturated"}."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import subprocess
import sys

import orjson

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.bench.rate_search import met, next_rate
from specdec_tui.core.config import BenchProfile
from tests.test_sim_support import SimProcess, seed_flags

# the simulator 5× faster, 4 running at most: it serves ~21 requests/s of 48 tokens
SIM_FLAGS = [*seed_flags(3), "--time-scale", "5", "--load-seconds", "1", "--max-running-requests", "4"]
SLO = "ttft_p90=150ms"
PROFILE = BenchProfile(requests=80, warmup=10, cooldown=10, max_tokens=48, ignore_eos=True, slo=(SLO,), seed=1)


async def _fine_scan(url: str) -> float:
    """The boundary by a scan in 0.5 requests/s steps: between the last rate met and the first missed."""
    last_met = 13.0
    rate = 13.5
    while rate <= 24:
        events: list[BenchEvent] = []
        await drive_benchmark(url, dataclasses.replace(PROFILE, rate=rate), events.append)  # the same seed: same arrivals, scaled
        done = events[-1]
        assert isinstance(done, RunDone) and done.error is None
        if not met(done.levels[0]):
            return math.sqrt(last_met * rate)
        last_met = rate
        rate += 0.5
    raise AssertionError("the scan never missed the SLO")


def test_find_max_rate_bisects_to_the_fine_scan_within_5_percent_in_6_probes() -> None:
    p = SimProcess(SIM_FLAGS).start()
    try:
        p.wait_ready()
        out = subprocess.run(
            [sys.executable, "-m", "specdec_tui", "bench", "--url", p.url, "--find-max-rate", "--slo", SLO, "--rate", "40",
             "--requests", "80", "--warmup", "10", "--cooldown", "10", "--max-tokens", "48", "--ignore-eos",
             "--seed", "1", "--json"],
            capture_output=True, text=True, timeout=240, check=False)
        assert out.returncode == 0, out.stderr[-2000:]
        lines = [orjson.loads(line) for line in out.stdout.splitlines() if line.strip()]
        answer = lines[-1]
        assert answer["probes"] <= 6 and answer["probes"] == sum(1 for x in lines if x.get("probe"))
        assert answer["saturated"] is True and "queue growing" in answer["saturation"]  # 40/s is twice its capacity
        truth = asyncio.run(_fine_scan(p.url))
    finally:
        p.stop()
    assert abs(answer["max_rate"] / truth - 1) <= 0.05, (answer, truth)


def test_next_rate_brackets_by_capacity_then_bisects_in_log_space() -> None:
    assert next_rate(None, 40.0, 21.0) == 0.9 * 21.0  # saturated: just under what it served
    assert next_rate(None, 40.0, 40.0) == 20.0  # missed without saturating: halve
    assert next_rate(10.0, None, None) == 40.0  # every probe met: climb
    assert next_rate(16.0, 19.0, 30.0) == math.sqrt(16.0 * 19.0)
    assert next_rate(16.0, 40.0, 18.0) == math.sqrt(16.0 * 1.1 * 18.0)  # never beyond what it could serve
