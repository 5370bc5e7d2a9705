"""What both load shapes (closed loop in drive, open loop in open_loop) share: constants, and how a level's
records and the server's counters around it become its result."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp

from specdec_tui.bench.client import RequestRecord
from specdec_tui.bench.events import BenchEvent
from specdec_tui.bench.server_stats import accept_from_counters, counters, server_avg_accept_length
from specdec_tui.bench.stats import LevelInputs, build_level_result
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.prometheus_text import Counters
from specdec_tui.core.results import LevelResult
from specdec_tui.core.slo import parse_slos

Emit = Callable[[BenchEvent], None]
PROGRESS_INTERVAL_S = 0.2  # ≤ 5 progress events per second
TEXT_SAMPLE_REQUESTS = 32  # per level: enough outputs for a median repetition, no text kept for the rest
ENDPOINT_PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}


async def level_result(client: aiohttp.ClientSession, base_url: str, profile: BenchProfile,
                       records: list[RequestRecord], before: Counters | None, *, concurrency: int,
                       duration_s: float | None, repetitive_prompts: bool, warnings: list[str]) -> LevelResult:
    """A finished level's result: its records, and the server's acceptance over exactly this level (its counters
    read again now, every request ended) and over its lifetime (`/server_info`), shown beside each other."""
    after = await counters(client, base_url)
    inputs = LevelInputs(
        concurrency=concurrency,
        duration_s=duration_s,
        temperature=profile.temperature,
        ignore_eos=profile.ignore_eos,
        repetitive_prompts=repetitive_prompts,
        accept_from_counters=accept_from_counters(before, after),
        server_avg_accept_length=await server_avg_accept_length(client, base_url),
        warnings=warnings,
        slo=parse_slos(profile.slo),
    )
    return build_level_result(records, inputs)
