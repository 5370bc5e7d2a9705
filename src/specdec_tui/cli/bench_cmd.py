"""`specdec-tui bench`: run the streaming benchmark headless, with a live table or JSON lines.

JSON lines (`--json`): one object per finished level, then one `{"summary": ...}` object, so a
script can follow a long run as it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from specdec_tui.cli.common import (
    add_target_options,
    healthy_timeout_of,
    load_cli_config,
    open_cli_host,
    parse_concurrency,
)
from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult
from specdec_tui.loop.unit_checks import api_key_from

if TYPE_CHECKING:
    from specdec_tui.bench.events import RunDone


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `bench` command."""
    p = sub.add_parser("bench", help="benchmark a server: tok/s, TTFT, TPOT, ITL and acceptance per concurrency")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--url", help="server base URL, e.g. http://127.0.0.1:30000 (no host is contacted)")
    add_target_options(p, host_group=where)
    p.add_argument("--profile", default=argparse.SUPPRESS, metavar="NAME", help="benchmark profile from the config")
    p.add_argument("--concurrency", metavar="LIST", help="levels, e.g. 1,4,16,32,64")
    p.add_argument("--requests", type=int, metavar="N", help="measured requests per level")
    p.add_argument("--duration", type=float, metavar="S", help="seconds per level instead of a request count")
    p.add_argument("--max-tokens", type=int, metavar="M")
    p.add_argument("--temperature", type=float, metavar="T")
    p.add_argument("--ignore-eos", action="store_true", default=None)
    p.add_argument("--prompts", metavar="SET", help="realistic | repetitive | path to a prompt file")
    p.add_argument("--workload", metavar="NAME|FILE",
                   help="chat | code | long-context | trap | a JSONL file of prompts or chat messages, or a recorded "
                        "trace (arrival times + lengths: replayed open loop at its times, --rate time-scales it)")
    p.add_argument("--seed", type=int, metavar="N", help="seed for lengths, order and arrival times (recorded with the run)")
    p.add_argument("--input-len", metavar="DIST", help="fixed:N | uniform:A:B | lognormal:MEDIAN:SIGMA (words)")
    p.add_argument("--output-len", metavar="DIST", help="fixed:N | uniform:A:B | lognormal:MEDIAN:SIGMA (tokens)")
    p.add_argument("--top-p", type=float, metavar="P")
    p.add_argument("--rate", type=float, metavar="R", help="open loop: R requests/s arrive whatever is in flight")
    p.add_argument("--arrivals", choices=("poisson", "constant"), help="open-loop arrival times (default poisson)")
    p.add_argument("--burst", type=float, metavar="B", help="open loop: requests arrive B at a time (mean rate kept)")
    p.add_argument("--cooldown", type=int, metavar="N", help="open loop: the last N arrivals are not measured")
    p.add_argument("--slo", action="append", metavar="TARGET",
                   help="e.g. ttft_p99=2s or itl_p99=50ms (repeatable): goodput counts requests meeting every one")
    p.add_argument("--find-max-rate", action="store_true",
                   help="bisect the highest open-loop rate whose levels meet every --slo (≤ 6 probes)")
    p.add_argument("--endpoint", choices=("completions", "chat"))
    p.add_argument("--warmup", type=int, metavar="N", help="warm-up requests per worker per level")
    p.add_argument("--model", help="model name to send (default: the first of /v1/models)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a live table")
    p.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    p.add_argument("--record", action="store_true",
                   help="with --host: record the run as a trial in the host's current session (the unit it runs); "
                        "with --find-max-rate, its probes as one trial")
    p.add_argument("--session", default=argparse.SUPPRESS, metavar="FILE",
                   help="with --record: the session file to add the trial to (default: the host's current session)")
    p.add_argument("--new-session", action="store_true", default=argparse.SUPPRESS,
                   help="with --record: start a fresh session instead of continuing the host's current one")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "record", False) and (args.url or not getattr(args, "host", None)):
        raise CliError("--record needs --host NAME: the run is recorded with that host's unit in its session")
    base_url, api_key, profile = resolve(args)
    from specdec_tui.loop.health_probe import server_probe

    probe, facts = asyncio.run(server_probe(base_url, api_key))
    # a --url where nothing listens: said once, before a table of 32 refused requests (a new user's typo'd port).
    # Not for --host: a local host's server was waited for above, and an SSH host's may be starting (`host
    # restart` returns at once): its run goes on as before and says in words if every request failed
    if args.url and not probe.reachable:
        raise CliError(f"nothing accepts connections at {base_url} ({probe.error}); nothing was sent — check that "
                       "the server is up (`specdec-tui host status`) and the URL's port")
    if args.find_max_rate:
        from specdec_tui.cli.rate_search_out import run_rate_search

        return run_rate_search(base_url, profile, api_key=api_key, model=args.model, as_json=args.json,
                               record=args if getattr(args, "record", False) else None)
    from specdec_tui.bench import run_benchmark
    from specdec_tui.bench.events import LevelDone, RunDone
    from specdec_tui.cli.bench_output import JsonOut, LiveTable

    out = JsonOut(profile) if args.json else LiveTable(profile)
    done: RunDone | None = None
    finished: list[LevelResult] = []  # the levels done so far: an interrupted --record keeps them

    async def go() -> None:
        nonlocal done
        out.set_facts(facts)
        async for ev in run_benchmark(base_url, profile, api_key=api_key, model=args.model):
            if isinstance(ev, RunDone):
                ev = dataclasses.replace(ev, error=run_error(ev, base_url))
                done = ev
            elif isinstance(ev, LevelDone):
                finished.append(ev.result)
            out.on_event(ev)

    try:
        with out:
            asyncio.run(go())
    except KeyboardInterrupt:
        from specdec_tui.cli.interrupts import interrupted_by

        out.finish_cancelled()
        if getattr(args, "record", False):  # the levels measured before the interrupt, as the panel keeps them
            trial_id, path = asyncio.run(record_run(args, profile, finished, None, cancelled=True))
            print(f"recorded as trial {trial_id} (cancelled) in {path}", file=sys.stderr)
        return 128 + interrupted_by()
    if done is None:
        raise CliError("the benchmark ended without a result")
    if getattr(args, "record", False):
        trial_id, path = asyncio.run(record_run(args, profile, list(done.levels), done.error))
        print(f"recorded as trial {trial_id} in {path}", file=sys.stderr)
    if done.error:
        raise CliError(done.error)
    return 0


async def record_run(args: argparse.Namespace, profile: BenchProfile, levels: list[LevelResult],
                     error: str | None, *, cancelled: bool = False) -> tuple[int, Any]:
    """`--record`: the run as a trial of the host's current session (as the panel's b records one), with the
    unit the host runs; returns the trial id and the session file."""
    from specdec_tui.cli.session_arg import resolve_session
    from specdec_tui.core.session import merge_from_disk
    from specdec_tui.core.session_merge import session_lock
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.trial import TrialLoop

    config, host_name = load_cli_config(args)
    host = open_cli_host(config, host_name, keep_running=True)
    try:
        text = await host.read_unit()
        session, path = resolve_session(getattr(args, "session", None), host_name, host.info.unit,
                                        new=bool(getattr(args, "new_session", False)), profile=profile)
        runner = TrialLoop.for_host(host, config, session, host_name=host_name, session_path=path, profile=profile)
        trial = runner.start_trial(text)
    except HostError as err:
        raise CliError(f"--record: {err}") from None
    finally:
        await host.close()
    trial.levels = levels
    trial.status, trial.failure = (("failed", f"benchmark: {error}") if error
                                   else ("cancelled", "") if cancelled else ("ok", ""))
    runner.record(trial)  # through the file's saver: the trials already in it are not serialised again
    with session_lock(path):  # the id the file gave it (its writer renumbers a copy when another took the id)
        merge_from_disk(session, path)
    return trial.id, path


def run_error(done: RunDone, base_url: str) -> str | None:
    """The run's failure in words: the engine's, or "every request failed" (a run without one answered
    request measured nothing, whatever its table says)."""
    if done.error or done.cancelled:
        return done.error
    total = sum(lv.requests for lv in done.levels)
    failed = sum(lv.errors for lv in done.levels)
    if total == 0 or failed < total:
        return None
    kinds: dict[str, int] = {}
    for lv in done.levels:
        for kind, n in lv.error_kinds.items():
            kinds[kind] = kinds.get(kind, 0) + n
    listed = ", ".join(f"{kind} ×{n}" for kind, n in kinds.items())
    if set(kinds) == {"bad_usage"}:
        return (f"all {total} requests failed ({listed}): the server at {base_url} answered, but its token counts "
                "(usage) contradict its streams; the figures measure nothing — see the level's warning")
    statuses = sorted({kind.removeprefix("http_") for kind in kinds if kind.startswith("http_")})
    if statuses and len(statuses) == len(kinds):  # it answered, every time with an error status
        hint = ("; --url is the server's root (http://host:port, without /v1)"
                if "404" in statuses and urlsplit(base_url).path.rstrip("/") else "")
        return (f"all {total} requests failed ({listed}): the server at {base_url} answered HTTP "
                f"{', '.join(statuses)}{hint}; the figures measure nothing")
    why = (f"nothing accepted the connection at {base_url}" if set(kinds) == {"connect"}
           else f"the server at {base_url} did not answer them")
    return (f"all {total} requests failed ({listed or 'errors'}): {why}; the figures measure nothing — "
            "check that the server is up and ready (`specdec-tui host status`, `host journal`)")


def resolve(args: argparse.Namespace) -> tuple[str, str | None, BenchProfile]:
    """URL, API key and the profile with command-line overrides applied. With --host, the host's server
    is checked and waited for until ready (see `wait_for_server`)."""
    host_name = None if args.url else getattr(args, "host", None)
    profile_name = getattr(args, "profile", None)
    config = None
    if host_name or profile_name:
        config, host_name = load_cli_config(args) if host_name else (_load_config(args), None)
    api_key_env = args.api_key_env
    if args.url:
        base_url = args.url
    elif host_name and config is not None:
        host_config = config.host_settings(host_name)
        api_key_env = api_key_env or (host_config.api_key_env if host_config else None)
        base_url = wait_for_server(config, host_name, quiet=args.json,
                                   api_key=os.environ.get(api_key_env) if api_key_env else None)
    else:
        raise CliError("say where to send requests: --url URL or --host NAME")
    if not base_url.startswith(("http://", "https://")):
        raise CliError(f"--url must start with http:// or https:// (got {base_url!r})")
    if not base_url.isprintable() or any(char.isspace() for char in base_url):  # the HTTP client's traceback else
        raise CliError(f"--url holds a space or a control character (got {base_url!r}): write the URL alone")
    try:  # a bracket left open, a bad port: the HTTP client's traceback; no host: "every request failed"
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - read for its ValueError
        problem = "" if parts.hostname else "it names no host"
    except ValueError as err:
        problem = str(err)
    if problem:
        raise CliError(f"--url is not a server's address (got {base_url!r}: {problem}); write it as "
                       "http://HOST:PORT, e.g. http://127.0.0.1:30000")
    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise CliError(f"environment variable {api_key_env} holding the API key is not set")
    if host_name and config is not None:
        from specdec_tui.cli.host_profile import host_base_profile

        # the host's profile as the panel's b, a sweep and a tune take it (the demo's own, else the config's
        # default_profile): `bench --host demo` ran 256 tokens at temperature 0 where the panel ran 128 at 0.7,
        # and `--record` put that trial beside the panel's in one session
        return base_url, api_key, apply_overrides(host_base_profile(args, config, host_name), args)
    profile = BenchProfile()
    if profile_name:
        assert config is not None
        if profile_name not in config.profiles:
            known = ", ".join(sorted(config.profiles))
            raise CliError(f"no benchmark profile {profile_name!r} in the config (profiles: {known})")
        profile = config.profiles[profile_name]
    return base_url, api_key, apply_overrides(profile, args)


def _load_config(args: argparse.Namespace) -> Any:
    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.config_file import find_config_path, load_config

    try:
        return load_config(find_config_path(getattr(args, "config", None)))
    except ConfigError as err:
        raise CliError(str(err)) from None


def wait_for_server(config: Any, name: str, *, quiet: bool, api_key: str | None = None) -> str:
    """The base URL of host `name`, once its server is ready to be measured.

    On a local host (the demo), a unit that is not running is refused in words (benchmarking it would only
    count connection errors); a unit that is starting (e.g. right after `host restart`, which returns at once)
    is waited for, up to the host's healthy_timeout_s, saying so on stderr unless `quiet`."""
    from specdec_tui.hosts.errors import HostError

    host = open_cli_host(config, name, keep_running=True)
    if host.info.kind != "local":
        # An SSH host is not contacted (bench needs only its base_url, and SSH may not even be reachable from
        # here); a run against a server that is not up fails as a whole below (`run_error`), in words.
        return host.info.base_url
    timeout = healthy_timeout_of(config.host_settings(name))
    try:
        asyncio.run(_wait_ready(host, name, timeout, quiet=quiet, api_key=api_key or api_key_from(config.host_settings(name))))
    except HostError as err:
        raise CliError(f"{name}: {err}; or pass --url") from None
    return host.info.base_url


async def _wait_ready(host: Any, name: str, timeout: float, *, quiet: bool, api_key: str | None) -> None:
    from specdec_tui.loop.health import NotHealthy, wait_ready
    from specdec_tui.loop.start_failure import start_failure_cause

    await host.connect()
    try:
        status = await host.status()
        if not status.is_running:
            why = f"{status.active_state}, result {status.result}" if status.result else status.active_state
            cause = await start_failure_cause(host) if status.is_failed else None
            raise CliError(f"the {name} host's service is not running ({host.info.unit}: {why})"
                           + (f" — journal: {cause}" if cause else "")
                           + f": start it with `specdec-tui host restart --host {name}`")
        try:  # already serving: no message
            await wait_ready(host, host.info.base_url, timeout_s=min(0.5, timeout), api_key=api_key)
            return
        except NotHealthy as err:
            if err.snapshot is not None and err.snapshot.status is not None and err.snapshot.status.is_failed:
                raise CliError(f"{name}: {err}") from None
        if not quiet:
            print(f"waiting for {name} ({host.info.base_url}) to be ready before benchmarking "
                  f"(up to {timeout:.0f} s)…", file=sys.stderr, flush=True)
        try:
            await wait_ready(host, host.info.base_url, timeout_s=timeout, api_key=api_key)
        except NotHealthy as err:
            cause = await start_failure_cause(host)
            raise CliError(f"{name}: not benchmarking: {err}" + (f" — journal: {cause}" if cause else "")) from None
        if not quiet:
            print(f"{name} is ready", file=sys.stderr, flush=True)
    finally:
        await host.close()


def apply_overrides(profile: BenchProfile, args: argparse.Namespace) -> BenchProfile:
    changes: dict[str, Any] = {}
    if args.concurrency:
        changes["concurrency"] = parse_concurrency(args.concurrency)
    if args.duration is not None:
        changes["duration_s"], changes["requests"], changes["cut_trace"] = args.duration, None, True
    if args.requests is not None:
        changes["requests"], changes["duration_s"], changes["cut_trace"] = args.requests, None, True
    if getattr(args, "slo", None):  # sweep reuses this without the load options
        changes["slo"] = tuple(args.slo)
    for arg, name in (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("ignore_eos", "ignore_eos"),
                      ("prompts", "prompts"), ("endpoint", "endpoint"), ("warmup", "warmup"),
                      ("workload", "workload"), ("seed", "seed"), ("input_len", "input_len"), ("output_len", "output_len"),
                      ("top_p", "top_p"), ("rate", "rate"), ("arrivals", "arrivals"), ("burst", "burst"),
                      ("cooldown", "cooldown")):
        value = getattr(args, arg, None)
        if value is not None:
            changes[name] = value
    profile = dataclasses.replace(profile, **changes)
    check_load(profile)
    return profile


def check_load(profile: BenchProfile) -> None:
    """The load options, checked before anything is sent: a bad one is a sentence, not a failed run."""
    from specdec_tui.bench.workloads import WorkloadError, load_workload
    from specdec_tui.core.config_values import RULES

    for key in ("input_len", "output_len", "slo", "burst", "rate", "cooldown", "requests", "duration_s", "warmup",
                "max_tokens", "temperature", "top_p"):
        value = getattr(profile, key)
        problem = RULES[key](value) if value is not None else None  # None: requests when a duration is given
        if problem:
            raise CliError(f"--{key.removesuffix('_s').replace('_', '-')}: {problem}")
    if profile.workload:  # a bad line of the operator's file, named now rather than under an empty table
        try:
            load_workload(profile.workload)
        except WorkloadError as err:
            raise CliError(str(err)) from None
