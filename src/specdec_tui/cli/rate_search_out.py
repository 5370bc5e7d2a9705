"""`bench --find-max-rate`: runs the rate search (bench.rate_search) and prints each probe as it ends, then the
answer — with --json, one object per probe and, as the last line, {"max_rate", "probes", "saturated", ...}.
With --record the search runs as the panel's does (loop.rate_search.search_max_rate, the one owner): the probes
become one trial of the host's session, labelled with the answer."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable

from specdec_tui.bench.events import BenchEvent, LevelDone
from specdec_tui.bench.rate_search import MAX_PROBES, RateSearch, find_max_rate, probe_words
from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.json_out import json_text
from specdec_tui.core.results import LevelResult
from specdec_tui.core.terminal_codes import terminal_safe


def run_rate_search(base_url: str, profile: BenchProfile, *, api_key: str | None, model: str | None, as_json: bool,
                    record: argparse.Namespace | None = None) -> int:
    """`record`: the command's arguments when --record asks for the probes as a trial of the host's session."""
    from specdec_tui.cli.bench_output import level_json

    if not profile.slo:
        raise CliError("--find-max-rate needs at least one --slo target, e.g. --slo ttft_p99=2s --slo itl_p99=50ms")
    if not as_json:
        print(f"finding the highest rate meeting {', '.join(profile.slo)} (≤ {MAX_PROBES} probes of "
              f"{profile.requests or profile.duration_s} {'requests' if profile.requests else 's'})", flush=True)

    def on_event(ev: BenchEvent) -> None:
        if isinstance(ev, LevelDone):
            print_probe(ev.result)

    def print_probe(lv: LevelResult) -> None:
        if as_json:
            print(json_text({"probe": True, **level_json(lv)}), flush=True)
            return
        print(terminal_safe(f"  {lv.rate:g} requests/s: {probe_words(lv)}"), flush=True)

    try:
        if record is not None:
            search = asyncio.run(_recorded(record, profile, print_probe))
        else:
            search = asyncio.run(find_max_rate(base_url, profile, on_event, api_key=api_key, model=model))
    except ValueError as err:
        raise CliError(str(err)) from None
    print(json_text(search.to_json()) if as_json else summary(search), flush=True)
    return 0


async def _recorded(args: argparse.Namespace, profile: BenchProfile, print_probe: Callable[[LevelResult], None]) -> RateSearch:
    """The search through the host's trial loop (loop.rate_search, as the panel's M runs it): the unit it runs is
    measured, nothing pushed, and the probes saved as one trial of the session as each ends."""
    from specdec_tui.cli.common import load_cli_config, open_cli_host
    from specdec_tui.cli.session_arg import resolve_session
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.rate_search import RateProbeDone, search_max_rate
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.loop.unit_checks import WorkflowError

    config, host_name = load_cli_config(args)
    host = open_cli_host(config, host_name, keep_running=True)
    try:
        session, path = resolve_session(getattr(args, "session", None), host_name, host.info.unit,
                                        new=bool(getattr(args, "new_session", False)), profile=profile)
        runner = TrialLoop.for_host(host, config, session, host_name=host_name, session_path=path, profile=profile)
        from specdec_tui.loop.health_probe import server_facts

        runner.facts = await server_facts(runner.base_url, runner.api_key)  # the trial's max running requests etc.

        def on_event(event: object) -> None:
            if isinstance(event, RateProbeDone):
                print_probe(event.level)

        search = await search_max_rate(runner, profile, on_event=on_event)
    except (HostError, WorkflowError) as err:
        raise CliError(f"--record: {err}") from None
    finally:
        await host.close()
    trial = session.trials[-1]
    print(f"recorded as trial {trial.id} ({len(trial.levels)} probes) in {path}", file=sys.stderr)
    return search


def summary(s: RateSearch) -> str:
    return terminal_safe(s.words())
