"""`bench --find-max-rate` (issue 33) against the real simulator process: the bisection lands within ±5 % of
the boundary a fine scan of the same server finds, in ≤ 6 probes, names the saturation it met, and with
--json ends on {"max_rate", "probes", "saturated"}. The scan's own noise was measured (bench/rate_search_noise.py:
three full scans, six searches): its boundary is judged by the fewest wrong-side verdicts, and the search stops
at a bracket within 1.05× so that half of the ±5 % is left to that noise."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import subprocess
import sys

import orjson

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, RunDone
from specdec_tui.bench.rate_search import met, next_rate, scan_crossing
from specdec_tui.core.config import BenchProfile
from tests.test_sim_support import SimProcess, seed_flags

# the simulator 5× faster, 4 running at most: it serves ~21 requests/s of 48 tokens
SIM_FLAGS = [*seed_flags(3), "--time-scale", "5", "--load-seconds", "1", "--max-running-requests", "4"]
SLO = "ttft_p90=150ms"
PROFILE = BenchProfile(requests=80, warmup=10, cooldown=10, max_tokens=48, ignore_eos=True, slo=(SLO,), seed=1)


GRID = [16.0 + 0.5 * i for i in range(19)]  # 16 … 25 requests/s: the boundary (~22) with room both sides


async def _fine_scan(url: str) -> float:
    """The boundary by a scan of every rate of GRID (0.5 requests/s steps; the same seed: the same requests at the
    same arrivals, scaled), judged by `scan_crossing`: the fewest verdicts on the wrong side. Not the first miss:
    on a loaded machine one scan missed at 17.0 (and met again up to 22.0), which put that "truth" 25 % low
    (bench/rate_search_noise.py)."""
    verdicts = []
    for rate in GRID:
        events: list[BenchEvent] = []
        await drive_benchmark(url, dataclasses.replace(PROFILE, rate=rate), events.append)
        done = events[-1]
        assert isinstance(done, RunDone) and done.error is None
        verdicts.append(met(done.levels[0]))
    assert verdicts[0] and not verdicts[-1], verdicts  # the boundary is inside the grid
    return scan_crossing(GRID, [verdicts])


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


def test_a_scan_s_boundary_is_not_moved_by_one_noisy_miss() -> None:
    grid = [20.0, 20.5, 21.0, 21.5, 22.0, 22.5, 23.0]
    assert scan_crossing(grid, [[True, False, True, True, True, False, False]]) == math.sqrt(22.0 * 22.5)
    assert scan_crossing(grid, [[True] * 7]) == 23.0 and scan_crossing(grid, [[False] * 7]) == 20.0
    # two scans disagreeing over 22.0 and 22.5: every threshold from 22.0 to 23.0 has two verdicts on its wrong
    # side; the middle of that tie
    assert scan_crossing(grid, [[True, True, True, True, False, False, False],
                                [True, True, True, True, True, True, False]]) == math.sqrt(22.0 * 22.5)


def test_next_rate_brackets_by_capacity_then_bisects_in_log_space() -> None:
    assert next_rate(None, 40.0, 21.0) == 0.9 * 21.0  # saturated: just under what it served
    assert next_rate(None, 40.0, 40.0) == 20.0  # missed without saturating: halve
    assert next_rate(10.0, None, None) == 40.0  # every probe met: climb
    assert next_rate(16.0, 19.0, 30.0) == math.sqrt(16.0 * 19.0)
    assert next_rate(16.0, 40.0, 18.0) == math.sqrt(16.0 * 1.1 * 18.0)  # never beyond what it could serve
