"""Open-loop load: requests sent at scheduled times for a target rate (core.arrivals), whatever is in flight —
as production traffic arrives — unlike the closed loop's C workers. The first `warmup` and the last `cooldown`
arrivals load the server but are not measured; progress shows the requests in flight. A recorded trace
(`workloads.trace`) gives the send times itself: its requests go in order at its times, or time-scaled to a rate."""

from __future__ import annotations

import asyncio
import itertools
from time import perf_counter_ns

import aiohttp

from specdec_tui.bench.client import RequestRecord, stream_request
from specdec_tui.bench.drive_common import ENDPOINT_PATHS, PROGRESS_INTERVAL_S, TEXT_SAMPLE_REQUESTS, Emit, level_result
from specdec_tui.bench.events import LevelProgress, LevelStarted
from specdec_tui.bench.server_stats import counters
from specdec_tui.bench.workloads.trace import cut_offsets, mean_rate, scaled
from specdec_tui.core.arrivals import arrival_offsets
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.metrics import NS_PER_S
from specdec_tui.core.results import LevelResult


def measured_count(profile: BenchProfile, rate: float) -> int:
    if profile.duration_s:
        return max(1, round(rate * profile.duration_s))
    return max(1, profile.requests or 1)


async def run_open_level(
    client: aiohttp.ClientSession,
    base_url: str,
    bodies: list[bytes],
    profile: BenchProfile,
    rate: float | None,
    emit: Emit,
    prompt_cycle: itertools.count[int],
    repetitive_prompts: bool = False,
    seed: int = 0,
    limits: list[int] | None = None,
    trace: tuple[float, ...] = (),
) -> LevelResult:
    """One level at `rate` requests/s, or of the recorded `trace` (bodies[i] at trace[i] s, time-scaled to `rate`
    when one is given); every sent request has ended (or was cut at the level timeout) on return."""
    if trace:
        offsets = scaled(trace, rate)
        if profile.cut_trace:  # --requests/--duration asked for part of it: cut after --rate's time scaling
            offsets = cut_offsets(offsets, profile.requests, profile.duration_s)
        rate = mean_rate(offsets) or float(len(offsets))
        first = min(profile.warmup, len(offsets) - 1)  # every request of the trace is sent; at least one is measured
        last = max(first + 1, len(offsets) - profile.cooldown)
        n = last - first
    else:
        assert rate is not None
        n = measured_count(profile, rate)
        first, last = profile.warmup, profile.warmup + n
        offsets = arrival_offsets(last + profile.cooldown, rate, profile.arrivals, burst=profile.burst, seed=seed)
    emit(LevelStarted(0, n, None))
    url = base_url + ENDPOINT_PATHS[profile.endpoint]
    chat = profile.endpoint == "chat"
    records: list[RequestRecord] = []
    state = {"in_flight": 0, "peak": 0, "done": 0, "errors": 0, "tokens": 0}
    warnings: list[str] = []
    before = await counters(client, base_url)

    async def one(rec: RequestRecord, body: bytes, limit: int) -> None:
        state["in_flight"] += 1
        state["peak"] = max(state["peak"], state["in_flight"])
        try:
            await stream_request(client, url, body, chat, rec, profile.request_timeout_s, limit, profile.stall_timeout_s)
        finally:
            state["in_flight"] -= 1
        if rec.measured:
            state["done"] += 1
            if rec.ok:
                state["tokens"] += rec.usage_total if rec.usage_total is not None else len(rec.times)
            else:
                state["errors"] += 1

    t0 = perf_counter_ns()

    async def report_progress() -> None:
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            elapsed = (perf_counter_ns() - t0) / NS_PER_S
            emit(LevelProgress(0, state["done"], state["errors"], state["tokens"],
                               state["tokens"] / elapsed if elapsed > 0 else 0.0, in_flight=state["in_flight"]))

    ticker = asyncio.create_task(report_progress())
    lateness = 0
    try:
        async with asyncio.timeout(profile.level_timeout_s):
            async with asyncio.TaskGroup() as tg:
                for i, off in enumerate(offsets):
                    due = t0 + int(off * NS_PER_S)
                    wait = due - perf_counter_ns()
                    if wait > 0:
                        await asyncio.sleep(wait / NS_PER_S)
                    else:
                        lateness = max(lateness, -wait)
                    measured = first <= i < last
                    rec = RequestRecord(measured, keep_text=measured and i - first < TEXT_SAMPLE_REQUESTS)
                    records.append(rec)
                    k = i if trace else next(prompt_cycle) % len(bodies)
                    tg.create_task(one(rec, bodies[k], limits[k] if limits else profile.max_tokens))
    except TimeoutError:
        cut = 0
        for rec in records:
            if rec.error == "cancelled":
                rec.error, cut = "level_timeout", cut + 1
        warnings.append(f"level stopped after its {profile.level_timeout_s:g} s limit; {cut} requests were cut off")
    finally:
        ticker.cancel()
    if lateness > 0.05 * NS_PER_S:
        warnings.append(f"the client sent some requests up to {lateness / 1e6:.0f} ms late: this machine could not keep "
                        f"{rate:g} requests/s; the arrivals were burstier than asked")
    res = await level_result(client, base_url, profile, records, before, concurrency=0, duration_s=None,
                             repetitive_prompts=repetitive_prompts, warnings=warnings)
    res.rate = rate
    res.peak_in_flight = state["peak"]
    res.saturated = saturation(records, rate)
    return res


def saturation(records: list[RequestRecord], rate: float) -> str:
    """Why the server could not keep up with `rate`, in words, or "": requests served well under the rate
    asked (the queue grows), or the time to first token rising through the level (no steady state)."""
    ok = sorted((r for r in records if r.measured and r.ok and r.first_content_ns), key=lambda r: r.start_ns)
    if len(ok) < 6:
        return ""
    span = (max(r.end_ns for r in ok) - ok[0].start_ns) / NS_PER_S
    served = len(ok) / span if span > 0 else rate
    third = len(ok) // 3
    early = sorted((r.first_content_ns or 0) - r.start_ns for r in ok[:third])[third // 2] / 1e6
    late = sorted((r.first_content_ns or 0) - r.start_ns for r in ok[-third:])[third // 2] / 1e6
    if late > 3 * early and late - early > 50:
        return (f"queue growing: TTFT p50 rose from {early:.0f} ms to {late:.0f} ms through the level "
                f"(served {served:.3g} of {rate:g} requests/s)")
    if served < 0.8 * rate:
        return f"queue growing: served {served:.3g} of {rate:g} requests/s"
    return ""
