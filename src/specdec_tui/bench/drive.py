"""The measuring itself: per concurrency level, exactly C workers each send their next streaming request
as soon as their last one ends, over one pooled client. `drive_benchmark` runs every level of a profile
on the caller's loop; `engine.BenchRun` (a thread) and `process_run.ProcessRun` (a spawned process) run
it away from the caller's loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Callable
from time import perf_counter_ns

import aiohttp
import orjson

from specdec_tui.bench.client import RequestRecord, make_client, stream_request
from specdec_tui.bench.drive_common import ENDPOINT_PATHS, PROGRESS_INTERVAL_S, TEXT_SAMPLE_REQUESTS, Emit, level_result
from specdec_tui.bench.events import (
    LevelDone,
    LevelProgress,
    LevelStarted,
    RunDone,
)
from specdec_tui.bench.open_loop import run_open_level
from specdec_tui.bench.request_plan import PlanError, build_plan
from specdec_tui.bench.server_stats import counters, get_body
from specdec_tui.bench.token_lengths import token_scale
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.metrics import NS_PER_S
from specdec_tui.core.results import LevelResult
from specdec_tui.core.slo import parse_slos

PHASE_HOOK: Callable[[str, int], None] | None = None  # bench/bench_engine.py: ("stream_start"|"stream_end", c)
FALLBACK_MODEL = "default"
# A level whose first requests each waited the whole stall timeout without one byte of content, while none of its
# requests got any, stops taking requests: something listens at the URL but does not answer (a server stuck, or not
# an inference server). A silent server at c=1 held `bench --url` for 32 requests x the stall timeout (16 min).
SILENT_STALLS_TO_STOP = 2


class ServerSilent(Exception):
    """The level stopped because the server answered nothing (SILENT_STALLS_TO_STOP stalls, no content at all)."""

    def __init__(self, base_url: str, stalls: int, stall_s: float) -> None:
        super().__init__(
            f"stopped: {base_url} took {stalls} requests and sent no content on any for the stall timeout "
            f"({stall_s:g} s each). Something listens there but does not answer: is it the SGLang server, and is "
            f"it stuck? (curl {base_url}/health; its journal)")


async def resolve_model(client: aiohttp.ClientSession, base_url: str) -> str:
    """First model id of /v1/models; a placeholder when the server does not say (SGLang ignores it)."""
    body = await get_body(client, f"{base_url}/v1/models", 10.0)
    try:
        data = orjson.loads(body) if body else {}
        ids = [m.get("id") for m in data.get("data", []) if isinstance(m, dict)]
        return next((i for i in ids if isinstance(i, str) and i), FALLBACK_MODEL)
    except (orjson.JSONDecodeError, AttributeError, TypeError):
        return FALLBACK_MODEL


class _Level:
    """Shared state of one level's workers: tickets, the measured window, progress counters."""

    def __init__(self, profile: BenchProfile, concurrency: int) -> None:
        self.c = concurrency
        self.duration_ns = int(profile.duration_s * NS_PER_S) if profile.duration_s else None
        # at least one measured request per worker: a profile's `requests` is a floor per level, so one count serves
        # levels 1…64 and the level's row says how many it measured (no warning: the figures lose nothing by it)
        self.planned = 0 if self.duration_ns else max(profile.requests or 1, concurrency)
        self.issued = 0
        self.w0: int | None = None
        self.records: list[RequestRecord] = []
        self.done = self.errors = self.tokens = 0
        self.sampled = 0  # measured requests whose text is kept for the degeneracy check
        self.silent_stalls = 0  # requests that waited the stall timeout without a byte of content
        self.answered = 0  # requests that got content (or ended without a stall)

    @property
    def server_silent(self) -> bool:
        """Nothing but silent stalls so far, SILENT_STALLS_TO_STOP of them: no further request is sent."""
        return self.silent_stalls >= SILENT_STALLS_TO_STOP and not self.answered

    def count_answer(self, rec: RequestRecord) -> None:
        if rec.error == "stall" and not rec.times:
            self.silent_stalls += 1
        elif rec.error != "cancelled":
            self.answered += 1

    def take_ticket(self) -> bool:
        """Whether a worker may start another measured request (no await between check and take)."""
        if self.duration_ns is not None:
            return self.w0 is None or perf_counter_ns() < self.w0 + self.duration_ns
        if self.issued >= self.planned:
            return False
        self.issued += 1
        return True

    def progress(self) -> LevelProgress:
        elapsed = (perf_counter_ns() - self.w0) / NS_PER_S if self.w0 else 0.0
        return LevelProgress(self.c, self.done, self.errors, self.tokens, self.tokens / elapsed if elapsed > 0 else 0.0)


async def run_level(
    client: aiohttp.ClientSession,
    base_url: str,
    bodies: list[bytes],
    profile: BenchProfile,
    concurrency: int,
    emit: Emit,
    prompt_cycle: itertools.count[int],
    repetitive_prompts: bool = False,
    limits: list[int] | None = None,
) -> LevelResult:
    """One closed-loop level: `concurrency` workers, each sending its next request when its last one ends."""
    lv = _Level(profile, concurrency)
    emit(LevelStarted(concurrency, lv.planned, profile.duration_s))
    url = base_url + ENDPOINT_PATHS[profile.endpoint]
    chat = profile.endpoint == "chat"
    warnings: list[str] = []
    before = await counters(client, base_url)  # after any earlier level's requests have all finished

    async def one(measured: bool) -> None:
        rec = RequestRecord(measured, keep_text=measured and lv.sampled < TEXT_SAMPLE_REQUESTS)
        lv.sampled += rec.keep_text
        lv.records.append(rec)
        i = next(prompt_cycle) % len(bodies)
        if measured and lv.w0 is None:
            lv.w0 = perf_counter_ns()
        await stream_request(client, url, bodies[i], chat, rec, profile.request_timeout_s,
                             limits[i] if limits else profile.max_tokens, profile.stall_timeout_s)
        lv.count_answer(rec)
        if measured:
            lv.done += 1
            if rec.ok:
                lv.tokens += rec.usage_total if rec.usage_total is not None else len(rec.times)
            else:
                lv.errors += 1

    async def worker() -> None:
        for _ in range(profile.warmup):
            if lv.server_silent:
                return
            await one(False)
        while not lv.server_silent and lv.take_ticket():
            await one(True)

    async def report_progress() -> None:
        last = None
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            p = lv.progress()
            if (p.done, p.tokens) != last:
                emit(p)
                last = (p.done, p.tokens)

    ticker = asyncio.create_task(report_progress())
    if PHASE_HOOK is not None:
        PHASE_HOOK("stream_start", concurrency)
    try:
        async with asyncio.timeout(profile.level_timeout_s):
            async with asyncio.TaskGroup() as tg:
                for _ in range(concurrency):
                    tg.create_task(worker())
    except TimeoutError:
        cut = 0
        for rec in lv.records:
            if rec.error == "cancelled":
                rec.error, cut = "level_timeout", cut + 1
        warnings.append(f"level stopped after its {profile.level_timeout_s:g} s limit; {cut} requests were cut off")
    finally:
        ticker.cancel()
        if PHASE_HOOK is not None:
            PHASE_HOOK("stream_end", concurrency)
    if lv.server_silent:
        raise ServerSilent(base_url, lv.silent_stalls, profile.stall_timeout_s)
    # every request of this level has finished (TaskGroup): the counters read now cover exactly this level
    return await level_result(client, base_url, profile, lv.records, before, concurrency=concurrency,
                              duration_s=profile.duration_s, repetitive_prompts=repetitive_prompts, warnings=warnings)


async def drive_benchmark(
    base_url: str, profile: BenchProfile, emit: Emit, *, api_key: str | None = None, model: str | None = None
) -> list[LevelResult]:
    """Run every level of `profile` on the current loop, reporting through `emit`; ends with RunDone."""
    base_url = base_url.rstrip("/")
    levels: list[LevelResult] = []
    try:
        plan = build_plan(profile, model or profile.model or FALLBACK_MODEL)  # checked before any request
        parse_slos(profile.slo)
    except (PlanError, ValueError) as err:
        emit(RunDone(levels, False, str(err)))
        return levels
    if profile.rate is None and not plan.arrivals and (not profile.concurrency or min(profile.concurrency) < 1):
        emit(RunDone(levels, False, "concurrency levels must be whole numbers ≥ 1"))
        return levels
    # the content checks judge the temperature that was sent (a workload may set its own)
    profile = dataclasses.replace(profile, temperature=plan.temperature)
    if profile.rate is not None and not profile.rate > 0:
        emit(RunDone(levels, False, "the request rate must be a number > 0 (requests per second)"))
        return levels
    open_loop = profile.rate is not None or bool(plan.arrivals)  # a trace: one level at its own times
    client = make_client(max(profile.concurrency or (1,)) if not open_loop else 1024, profile.stall_timeout_s, api_key)
    try:
        if not (model or profile.model):
            model = await resolve_model(client, base_url)
            plan = build_plan(profile, model)
        scale = None
        if plan.length_sample:  # input_len asked: in tokens, by the server's own count of this workload's words
            scale = await token_scale(client, base_url, str(plan.workload.get("hash")), plan.length_sample)
            plan = build_plan(profile, model or profile.model or FALLBACK_MODEL, scale)
        cycle = itertools.count()
        for load in ((profile.rate,) if open_loop else profile.concurrency):
            if open_loop:
                res = await run_open_level(client, base_url, plan.bodies, profile, load, emit, cycle,
                                           plan.repetitive, profile.seed, plan.limits, plan.arrivals)
            else:
                res = await run_level(client, base_url, plan.bodies, profile, int(load or 0), emit, cycle, plan.repetitive,
                                      plan.limits)
            res.workload = dict(plan.workload)
            if scale is not None and scale.tokens_per_word is None:
                res.warnings.append(scale.note)
            levels.append(res)
            emit(LevelDone(res))
        emit(RunDone(levels, False))
    except ServerSilent as silent:
        emit(RunDone(levels, False, str(silent)))
    except asyncio.CancelledError:
        emit(RunDone(levels, True))
        raise
    finally:
        await client.close()
    return levels
