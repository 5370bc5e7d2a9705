"""`bench --find-max-rate`: runs the rate search (bench.rate_search) and prints each probe as it ends, then the
answer — with --json, one object per probe and, as the last line, {"max_rate", "probes", "saturated", ...}."""

from __future__ import annotations

import asyncio

from specdec_tui.bench.events import BenchEvent, LevelDone
from specdec_tui.bench.rate_search import MAX_PROBES, RateSearch, find_max_rate, probe_words
from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.json_out import json_text
from specdec_tui.core.terminal_codes import terminal_safe


def run_rate_search(base_url: str, profile: BenchProfile, *, api_key: str | None, model: str | None, as_json: bool) -> int:
    from specdec_tui.cli.bench_output import level_json

    if not profile.slo:
        raise CliError("--find-max-rate needs at least one --slo target, e.g. --slo ttft_p99=2s --slo itl_p99=50ms")
    if not as_json:
        print(f"finding the highest rate meeting {', '.join(profile.slo)} (≤ {MAX_PROBES} probes of "
              f"{profile.requests or profile.duration_s} {'requests' if profile.requests else 's'})", flush=True)

    def on_event(ev: BenchEvent) -> None:
        if not isinstance(ev, LevelDone):
            return
        lv = ev.result
        if as_json:
            print(json_text({"probe": True, **level_json(lv)}), flush=True)
            return
        print(terminal_safe(f"  {lv.rate:g} requests/s: {probe_words(lv)}"), flush=True)

    try:
        search = asyncio.run(find_max_rate(base_url, profile, on_event, api_key=api_key, model=model))
    except ValueError as err:
        raise CliError(str(err)) from None
    print(json_text(search.to_json()) if as_json else summary(search), flush=True)
    return 0


def summary(s: RateSearch) -> str:
    return terminal_safe(s.words())
