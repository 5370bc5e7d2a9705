"""`specdec-tui demo` (also `--demo --headless`): one full trial on the embedded demo host, printed.

It proves the loop from a shell: edit the demo unit's flags, push, restart, wait healthy, benchmark,
record the trial in the demo host's current session (`--new-session`: a fresh one).
`--demo` without `--headless` opens the panel on the same host.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path

from specdec_tui.cli.common import parse_concurrency
from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.session import save_session
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import DEMO_PROFILES


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="run one full trial on the embedded demo host (no GPU, no SSH) and print it",
                       description="Edit the demo unit, push, restart, wait for /health, benchmark, save the trial.")
    add_demo_options(p)
    p.set_defaults(func=run)


def add_demo_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--steps", type=int, metavar="N",
                   help="set --speculative-num-steps N (and draft tokens N+1) before pushing")
    p.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                   help="a new demo workspace runs its simulated server X times faster (default 1: real time, "
                        "as the panel's demo; `sweep` and `session replay` default to 25, since they run many "
                        "trials). An existing workspace keeps the speed it was made with")
    p.add_argument("--profile", choices=sorted(DEMO_PROFILES), default="demo",
                   help="benchmark profile: demo (default: temperature 0.7, realistic prompts) or seed-trap "
                        "(the seed's temperature 0, ignore_eos, repetitive prompts: inflated acceptance)")
    p.add_argument("--concurrency", metavar="LIST", help="comma-separated levels (default 1,4,16)")
    p.add_argument("--requests", type=int, metavar="N", help="measured requests per level (default 8)")
    p.add_argument("--max-tokens", type=int, metavar="M", help="max_tokens per request (default 128)")
    p.add_argument("--workspace", metavar="DIR", help="demo workspace (default: in the user data dir)")
    p.add_argument("--keep-running", action="store_true", help="leave the simulated server running afterwards")
    p.add_argument("--session", default=argparse.SUPPRESS, metavar="FILE",
                   help="session file to add the trial to (default: the demo host's current session)")
    p.add_argument("--new-session", action="store_true", default=argparse.SUPPRESS,
                   help="start a fresh session instead of continuing the demo host's current one")


def demo_profile(args: argparse.Namespace) -> BenchProfile:
    name = getattr(args, "profile", None) or "demo"
    if name not in DEMO_PROFILES:
        raise CliError(f"the demo has no benchmark profile {name!r}; its profiles: {', '.join(sorted(DEMO_PROFILES))}")
    profile = replace(DEMO_PROFILES[name], concurrency=(1, 4, 16))
    if getattr(args, "concurrency", None):
        profile = replace(profile, concurrency=parse_concurrency(args.concurrency))
    if getattr(args, "requests", None):
        profile = replace(profile, requests=args.requests)
    if getattr(args, "max_tokens", None):
        profile = replace(profile, max_tokens=args.max_tokens)
    return profile


def with_steps(text: str, steps: int | None) -> str:
    if steps is None:
        return text
    if steps < 1:
        raise CliError("--steps must be at least 1")
    return UnitFile.parse(text).set_flags(
        {"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)}).text


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from specdec_tui.cli.bench_output import LiveTable
    from specdec_tui.cli.common import warn_time_scale
    from specdec_tui.cli.session_arg import resolve_session
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.hosts.local.workspace import (
        demo_config,
        ensure_demo_workspace,
    )
    from specdec_tui.loop.events import Phase
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.loop.unit_checks import WorkflowError

    ws = ensure_demo_workspace(Path(args.workspace) if args.workspace else None,
                               time_scale=getattr(args, "time_scale", 1.0))
    config: Config = demo_config(ws)
    profile = demo_profile(args)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo", keep_running=args.keep_running)
    session, session_path = resolve_session(getattr(args, "session", None), "demo", ws.unit_name,
                                            new=bool(getattr(args, "new_session", False)), profile=profile)
    runner = TrialLoop.for_host(host, config, session, host_name="demo", session_path=session_path, profile=profile)
    table = LiveTable(profile)

    def on_event(event: object) -> None:
        if isinstance(event, Phase):
            if table.live is None:
                print(terminal_safe(f"· {event.name}{': ' + event.detail if event.detail else ''}"), file=sys.stderr, flush=True)
            if event.name == "bench":
                table.set_facts(runner.trial.facts if runner.trial else None)  # its capacity marks queueing levels
                table.__enter__()
        elif table.live is not None:
            table.on_event(event)

    try:
        text = with_steps(await runner.read_running(), args.steps)
        print(f"demo host: {ws.unit_path} → {ws.base_url}", file=sys.stderr)
        warn_time_scale(ws.time_scale)
        trial = await runner.run_trial(text, on_event=on_event)
    except WorkflowError as err:
        raise CliError(str(err)) from None
    except HostError as err:
        raise CliError(f"demo host: {err}") from None
    finally:
        if table.live is not None:
            table.__exit__(None, None, None)
        if not args.keep_running:
            await host.close()
    save_session(session, session_path)
    facts = trial.facts
    if facts is not None:
        print(terminal_safe(f"server: {facts.model}, max_running_requests={facts.max_running_requests}, "
                            f"max_total_num_tokens={facts.max_total_num_tokens}, "
                            f"speculative {facts.speculative_words or '–'}"))
    print(terminal_safe(f"trial {trial.id} ({trial.label}): {trial.status}" + (f" — {trial.failure}" if trial.failure else "")))
    print(f"session saved to {session_path}")
    return 0 if trial.status == "ok" else 1
