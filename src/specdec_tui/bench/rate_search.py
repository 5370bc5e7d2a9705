"""`bench --find-max-rate`: the highest open-loop request rate whose level meets every SLO target, by
geometric bisection in at most `max_probes` levels.

The first probe runs at the profile's rate (or START_RATE). While probes pass, the rate quadruples; once one
fails, a saturated probe's served rate caps the next guess. When a passing and a failing rate bracket the
answer, each probe halves the bracket in log space; the answer is the bracket's geometric middle. The search
stops at a bracket within 1.05× (the middle within ±2.5 % of either end), not 1.1×: near the boundary a probe's
verdict is itself noisy (bench/rate_search_noise.py saw a fine scan's verdicts mixed from −5.6 % to +1.1 % of it
on a loaded machine), and the remaining half of the ±5 % is that noise's. Out of probes, a bracket within 1.1× still gives its
middle. Saturation (queue growing) is named in words.
Every probe sends the same requests in the same order at arrival times from the same seed (common random
numbers): the same load, only time-scaled, so a probe's verdict moves with the rate and not with the luck of
its draw or of which prompts it happened to get. A recorded trace is probed the same
way: its own pattern, time-scaled to each rate, starting at its own rate.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from specdec_tui.bench.client import make_client
from specdec_tui.bench.drive import FALLBACK_MODEL, resolve_model
from specdec_tui.bench.drive_common import Emit
from specdec_tui.bench.events import LevelDone
from specdec_tui.bench.open_loop import run_open_level
from specdec_tui.bench.request_plan import build_plan
from specdec_tui.bench.workloads.trace import mean_rate
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult

START_RATE = 8.0
MAX_PROBES = 6
CLOSE_ENOUGH = 1.05  # hi/lo at which the search stops: the geometric middle is within ±2.5 % of either end
MIDDLE_WITHIN = 1.1  # out of probes, a bracket this close still answers with its middle (±5 % of either end)


@dataclass(slots=True)
class Probe:
    rate: float
    met: bool
    level: LevelResult


@dataclass(slots=True)
class RateSearch:
    max_rate: float | None  # None: even the lowest rate probed missed the SLO
    probes: list[Probe] = field(default_factory=list)
    saturated: bool = False  # some probe saturated the server
    saturation: str = ""  # the first saturation, in words
    lo: float | None = None  # highest rate that met the SLO
    hi: float | None = None  # lowest rate that missed it

    def to_json(self) -> dict[str, object]:
        return {"max_rate": None if self.max_rate is None else round(self.max_rate, 4), "probes": len(self.probes),
                "saturated": self.saturated, "saturation": self.saturation, "met_at": self.lo, "missed_at": self.hi,
                "rates": [round(p.rate, 4) for p in self.probes], "met": [p.met for p in self.probes]}


    def words(self) -> str:
        """The answer in one sentence (the CLI's last line, the panel's result)."""
        sat = f"; saturated {self.saturation}" if self.saturated else ""
        if self.max_rate is None:
            lowest = min((p.rate for p in self.probes), default=None)
            return "no rate probed met the SLO" + (f" (lowest tried {lowest:.4g} requests/s)" if lowest else "") + sat
        return (f"max rate ≈ {self.max_rate:.3g} requests/s after {len(self.probes)} probes "
                f"(met at {self.lo:.4g}, missed at {'–' if self.hi is None else f'{self.hi:.4g}'}){sat}")


def met(level: LevelResult) -> bool:
    return level.requests > 0 and level.errors == 0 and not level.slo_missed and not level.saturated


def saturation_words(level: LevelResult) -> str:
    """"at 32 requests/s: queue growing: served 21.3 of 32 requests/s" ("" when the probe kept up)."""
    return f"at {level.rate or 0.0:.4g} requests/s: {level.saturated}" if level.saturated else ""


def probe_why(level: LevelResult) -> str:
    """Why a probe missed: the targets it missed, its saturation, its errors ("" when it met them)."""
    return "; ".join(level.slo_missed + ([level.saturated] if level.saturated else [])
                     + ([f"{level.errors} errors"] if level.errors else []))


def probe_words(level: LevelResult) -> str:
    """"met" or "missed (ttft p90 212 ms > 150 ms; queue growing …)": one probe's verdict and why."""
    why = probe_why(level)
    return ("met" if met(level) else "missed") + (f" ({why})" if why else "")


def scan_crossing(grid: list[float], verdicts: list[list[bool]]) -> float:
    """The boundary a fine scan names: the threshold with the fewest verdicts on its wrong side (met above it,
    missed below it) over one or more scans of `grid` (ascending), the geometric middle of its two grid points;
    ties share the middle of their run. Unlike "the first miss", one noisy miss far below does not move it."""
    costs = [sum(not ok for row in verdicts for ok in row[:cut]) + sum(ok for row in verdicts for ok in row[cut:])
             for cut in range(len(grid) + 1)]
    best = [cut for cut, cost in enumerate(costs) if cost == min(costs)]
    cut = best[len(best) // 2]
    if cut in (0, len(grid)):
        return grid[min(cut, len(grid) - 1)]
    return math.sqrt(grid[cut - 1] * grid[cut])


def next_rate(lo: float | None, hi: float | None, hi_served: float | None) -> float:
    """The next rate to probe, given the bracket so far."""
    if lo is None:
        assert hi is not None
        cap = hi_served if hi_served is not None and hi_served < hi else hi
        return 0.5 * cap if cap >= hi * 0.99 else 0.9 * cap
    if hi is None:
        return lo * 4
    top = min(hi, 1.1 * hi_served) if hi_served is not None and 1.1 * hi_served > lo else hi  # nothing beyond capacity
    return math.sqrt(lo * top)


async def find_max_rate(base_url: str, profile: BenchProfile, emit: Emit, *, api_key: str | None = None,
                        model: str | None = None, max_probes: int = MAX_PROBES,
                        on_probe: Callable[[int, float], None] | None = None) -> RateSearch:
    """Probe open-loop levels until the bracket is within CLOSE_ENOUGH or `max_probes` ran; `on_probe(index, rate)`
    is told of each probe before it starts (the panel's progress)."""
    if not profile.slo:
        raise ValueError("--find-max-rate needs at least one --slo target, e.g. --slo ttft_p99=2s")
    base_url = base_url.rstrip("/")
    client = make_client(1024, profile.stall_timeout_s, api_key)
    search = RateSearch(None)
    try:
        chosen = model or profile.model or await resolve_model(client, base_url) or FALLBACK_MODEL
        plan = build_plan(profile, chosen)
        rate = profile.rate or (mean_rate(plan.arrivals) if plan.arrivals else None) or START_RATE
        lo: float | None = None
        hi: float | None = None
        hi_served: float | None = None
        while len(search.probes) < max_probes:
            if on_probe is not None:
                on_probe(len(search.probes), rate)
            level = await run_open_level(client, base_url, plan.bodies, dataclasses.replace(profile, rate=rate), rate,
                                         emit, itertools.count(), plan.repetitive, profile.seed, plan.limits, plan.arrivals)
            level.workload = dict(plan.workload)
            emit(LevelDone(level))
            ok = met(level)
            search.probes.append(Probe(rate, ok, level))
            if level.saturated and not search.saturated:
                search.saturated, search.saturation = True, saturation_words(level)
            if ok:
                lo = rate if lo is None else max(lo, rate)
            else:
                if hi is None or rate < hi:
                    hi = rate
                    hi_served = level.requests / level.duration_s if level.duration_s > 0 else None
            if lo is not None and hi is not None and hi / lo <= CLOSE_ENOUGH:
                break
            rate = next_rate(lo, hi, hi_served)
        search.lo, search.hi = lo, hi
        if lo is not None:
            search.max_rate = math.sqrt(lo * hi) if hi is not None and hi / lo <= MIDDLE_WITHIN else lo
    finally:
        await client.close()
    return search
