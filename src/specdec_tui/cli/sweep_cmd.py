"""`specdec-tui sweep`: try every value of one flag on a host, benchmark each N times, pick the winner and
say why — the seed's steps 1 → 2 → 3 → 4 by hand, as one command.

`--host` given several times sweeps on all those hosts at once (`loop.parallel_sweep`): their units must be
the same but for the swept flag, the values are dealt out round-robin, the trials go to one session file
and the winner is chosen by the same rule.

Progress goes to stderr; the table (or, with --json, one JSON line per trial and a summary line) to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specdec_tui.cli.common import (
    StepClock,
    add_target_options,
    add_time_scale_option,
    load_cli_config,
    open_cli_host,
    progress,
)
from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.session import (
    Session,
)
from specdec_tui.core.sweep_rules import Objective
from specdec_tui.hosts.base import Host


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `sweep` command."""
    p = sub.add_parser("sweep", help="sweep one flag over values on a host and pick the best, with reasons",
                       conflict_handler="resolve",  # its --host replaces the common one: it may be given many times
                       description="For each value: edit the unit, push, restart, wait healthy, benchmark "
                                   "--repeats times. A value that does not start is recorded failed and rolled "
                                   "back. The winner is chosen by median − 1.4826·MAD over the repeats, the "
                                   "smallest value within 1% of the best winning. The host is left on the unit "
                                   "it ran before unless --apply-best. With several --host the values are "
                                   "dealt out round-robin and run on all those hosts at once.")
    add_host_options(p)
    p.add_argument("--host", action=_Hosts, default=argparse.SUPPRESS, metavar="NAME",
                   help="host from the config, or demo (default: the config's default_host); give it several "
                        "times to sweep on those hosts at once (their units must be the same but for the flag)")
    p.add_argument("--flag", default="speculative-num-steps", metavar="NAME",
                   help="the flag to sweep, without -- (default speculative-num-steps)")
    p.add_argument("--values", required=True, metavar="LIST", help="values: 1,2,3 or 1..6 or 1..3,5")
    p.add_argument("--repeats", type=int, default=3, metavar="N", help="benchmark runs per value (default 3)")
    p.add_argument("--objective", default="c1", metavar="c1|throughput@C",
                   help="c1: tok/s at the lowest concurrency, keeping the highest one above a floor (default); "
                        "throughput@C: output tok/s at concurrency C")
    p.add_argument("--floor-ratio", type=float, default=0.5, metavar="R",
                   help="with c1: the highest concurrency must keep R × the first value's throughput (default 0.5)")
    p.add_argument("--min-running-requests", type=int, metavar="N",
                   help="stop when max_running_requests falls below N")
    p.add_argument("--no-early-stop", action="store_true",
                   help="do not stop after two values in a row got worse")
    p.add_argument("--apply-best", action="store_true", help="leave the host running the winner")
    add_gate_option(p)
    p.add_argument("--profile", default=argparse.SUPPRESS, metavar="NAME", help="benchmark profile from the config")
    p.add_argument("--concurrency", metavar="LIST", help="levels, e.g. 1,4,16")
    p.add_argument("--requests", type=int, metavar="N", help="measured requests per level")
    p.add_argument("--max-tokens", type=int, metavar="M", help="max_tokens per request")
    p.add_argument("--temperature", type=float, metavar="T")
    p.add_argument("--prompts", metavar="SET", help="realistic | repetitive | path to a prompt file")
    p.add_argument("--session", default=argparse.SUPPRESS, metavar="FILE",
                   help="session file to add the trials to (default: the host's current session)")
    p.add_argument("--new-session", action="store_true", default=argparse.SUPPRESS,
                   help="start a fresh session instead of continuing the host's current one")
    p.add_argument("--json", action="store_true", help="JSON lines: one per trial, then a summary")
    # bench_cmd.apply_overrides reads these too; the sweep does not offer them.
    p.set_defaults(func=run, duration=None, ignore_eos=None, endpoint=None, warmup=None)


def add_gate_option(p: argparse.ArgumentParser) -> None:
    """--no-correctness-gate: skip comparing the winner's temperature-0 answers with the unit's own without
    speculation (two restarts and a few prompts) before it is promoted."""
    p.add_argument("--no-correctness-gate", action="store_true",
                   help="promote the winner without checking that it answers as the unit without speculation "
                        "does (faster; a draft that corrupts answers would go unnoticed)")


def add_host_options(p: argparse.ArgumentParser) -> None:
    """`--host`, `--config` (as every command takes them) and `--time-scale` for the demo host."""
    add_target_options(p)
    add_time_scale_option(p)


class _Hosts(argparse.Action):
    """`--host` as every command takes it (args.host, the first one), and every --host in args.hosts."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        hosts = [*getattr(namespace, "hosts", []), str(values)]
        namespace.hosts, namespace.host = hosts, hosts[0]


def host_names(args: argparse.Namespace, first: str) -> list[str]:
    """The hosts to sweep on: every --host given after the command, else the one host the config picks."""
    return list(getattr(args, "hosts", None) or [first])


# ---------------------------------------------------------------------------------------------- shared with `session replay`


def phase_line(event: object) -> str | None:
    """A progress line for the workflow's phases; None for events the caller shows otherwise."""
    from specdec_tui.loop.events import Phase, SessionSaveChanged

    if isinstance(event, Phase) and event.name not in ("done", "bench"):
        return f"  · {event.name}{': ' + event.detail if event.detail else ''}"
    if isinstance(event, SessionSaveChanged):  # the run goes on either way
        return f"  · {event.failure}" if event.failure else f"  · the session is saved again to {event.path}"
    return None


def trial_line(trial: Any) -> str:
    parts = [f"trial {trial.id} {trial.label}: {trial.status}"]
    if trial.facts and trial.facts.max_running_requests:
        parts.append(f"max_running_requests {trial.facts.max_running_requests}")
    parts += [f"c={lv.concurrency} {lv.output_tok_s:,.1f} tok/s" for lv in trial.levels]
    if trial.failure:
        parts.append(trial.failure)
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------- the command


def parse_objective(text: str, floor_ratio: float, profile: BenchProfile) -> Objective:
    if not 0 < floor_ratio <= 1:
        raise CliError(f"--floor-ratio must be between 0 and 1, not {floor_ratio:g}")
    if text == "c1":
        return Objective("c1_floor", floor_ratio=floor_ratio)
    kind, _, level = text.partition("@")
    if kind != "throughput":
        raise CliError(f"--objective takes c1 or throughput@C (e.g. throughput@64), not {text!r}")
    if not level:
        return Objective("throughput", concurrency=max(profile.concurrency))
    if not level.isdigit() or int(level) not in profile.concurrency:
        levels = ", ".join(map(str, profile.concurrency))
        raise CliError(f"--objective {text}: the benchmark runs concurrency {levels}; pick one of those")
    return Objective("throughput", concurrency=int(level))


def sweep_profile(args: argparse.Namespace, config: Config, host_name: str) -> BenchProfile:
    from specdec_tui.cli.bench_cmd import apply_overrides
    from specdec_tui.cli.host_profile import host_base_profile

    return apply_overrides(host_base_profile(args, config, host_name), args)


def open_session(args: argparse.Namespace, host_name: str, unit: str, profile: BenchProfile) -> tuple[Session, Path]:
    """The --session file (continued when it exists), else the host's current session (--new-session: a fresh one)."""
    from specdec_tui.cli.session_arg import resolve_session

    return resolve_session(getattr(args, "session", None), host_name, unit,
                           new=bool(getattr(args, "new_session", False)), profile=profile)


def run(args: argparse.Namespace) -> int:
    from specdec_tui.loop.sweep_plan import SweepError, SweepPlan, parse_values

    config, host_name = load_cli_config(args)
    names = host_names(args, host_name)
    profile = sweep_profile(args, config, names[0])
    try:
        plan = SweepPlan(flag=args.flag.removeprefix("--"), values=parse_values(args.values), repeats=args.repeats,
                         objective=parse_objective(args.objective, args.floor_ratio, profile),
                         min_running_requests=args.min_running_requests,
                         stop_after_worse=not args.no_early_stop, apply_best=args.apply_best,
                         correctness_gate=not args.no_correctness_gate)
    except SweepError as err:
        raise CliError(str(err)) from None
    repeated = next((n for n in names if names.count(n) > 1), None)
    if repeated is not None:
        raise CliError(f"--host {repeated} is given twice; name each host once")
    hosts = [open_cli_host(config, name) for name in names]
    from specdec_tui.loop.same_server import SameServer, refuse_same_server

    try:  # before the session is opened: nothing is written for a sweep that cannot run
        refuse_same_server([(name, host.info) for name, host in zip(names, hosts, strict=True)])
    except SameServer as err:
        raise CliError(str(err)) from None
    return asyncio.run(_run(args, config, names, hosts, profile, plan))


def _printer(args: argparse.Namespace, several: bool) -> Callable[[object], None]:
    """Progress lines on stderr (each naming its host when there are several), JSON trial lines on stdout."""
    from specdec_tui.loop.sweep_plan import OnHost, SweepHostFailed, SweepStopped, SweepTrialDone, SweepValueStarted

    clock = StepClock()

    def say(line: str) -> None:  # on stderr: with --json, stdout holds only the JSON lines
        progress(line)

    def on_event(event: object) -> None:
        if isinstance(event, SweepValueStarted):
            say(clock.line(event.index, event.total, event.label + (f" on {event.host}" if several else "")))
        elif isinstance(event, SweepTrialDone):
            say(f"  {event.trial.host + ': ' if several else ''}{trial_line(event.trial)}")
            if args.json:
                print(trial_json(event.trial), flush=True)
        elif isinstance(event, SweepStopped):
            say(f"stopping early: {event.reason}")
        elif isinstance(event, SweepHostFailed):
            lost = f"; its values {', '.join(event.values)} were not run" if event.values else ""
            say(f"{event.host} failed: {event.reason}{lost}; the other hosts go on")
        elif isinstance(event, OnHost):
            if (line := phase_line(event.event)) is not None:
                say(line.replace("  · ", f"  · {event.host}: ", 1))
        elif (line := phase_line(event)) is not None:
            say(line)

    return on_event


async def _run(args: argparse.Namespace, config: Config, names: list[str], hosts: list[Host], profile: BenchProfile,
               plan: Any) -> int:
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.busy import Refused
    from specdec_tui.loop.health import NotHealthy
    from specdec_tui.loop.host_group import ConnectFailed, HostGroup, with_host
    from specdec_tui.loop.parallel_sweep import sweep_running_units
    from specdec_tui.loop.sweep_plan import SweepError
    from specdec_tui.loop.trial import TrialLoop

    session, path = open_session(args, names[0], hosts[0].info.unit, profile)
    runners = [TrialLoop.for_host(host, config, session, host_name=name, session_path=path, profile=profile)
               for name, host in zip(names, hosts, strict=True)]
    on_event = _printer(args, several=len(hosts) > 1)
    try:
        async with HostGroup(list(zip(names, hosts, strict=True))):
            where = f"on {names[0]}" if len(names) == 1 else f"on {len(names)} hosts at once ({', '.join(names)})"
            progress(f"sweeping --{plan.flag} over {', '.join(plan.values)} {where} "
                     f"({plan.repeats} run(s) each, concurrency {','.join(map(str, profile.concurrency))}); "
                     f"session {path}")
            outcome = await sweep_running_units(runners, plan, on_event=on_event)
    except (SweepError, Refused) as err:  # Refused: a host held by another task (loop.host_hold)
        raise CliError(str(err)) from None
    except ConnectFailed as err:
        raise CliError(with_host(err, str(err))) from None
    except (HostError, NotHealthy) as err:  # past the connects: said as the first host's, as always
        raise CliError(f"{names[0]}: {err}") from None
    report(outcome, path, as_json=args.json)
    if outcome.host_failures or any(end not in ("winner", "original") for end in outcome.left_on_by_host.values()):
        return 1
    return 0 if outcome.promoted is not None else 1


def trial_json(trial: Any) -> str:
    from specdec_tui.cli.common import rounded
    from specdec_tui.core.json_out import json_text

    return json_text(rounded({
        "trial": trial.id, "host": trial.host, "label": trial.label, "status": trial.status, "sweep": trial.sweep,
        "max_running_requests": trial.facts.max_running_requests if trial.facts else None,
        "output_tok_s": {str(lv.concurrency): lv.output_tok_s for lv in trial.levels},
        "per_request_tok_s_p50": {str(lv.concurrency): lv.per_request_tok_s.p50 for lv in trial.levels},
        "failure": trial.failure or None,
    }))


def where_left(outcome: Any) -> list[str]:
    """Where each host was left, in words (one line for one host)."""
    plan = outcome.plan
    chosen = "the winner" if outcome.choice is None or outcome.choice.clear else "the pick"  # not clear: a pick
    words = {"winner": f"runs {chosen} ({plan.flag} {outcome.winner})",
             "original": "runs the unit it ran before the sweep"}
    if len(outcome.left_on_by_host) <= 1:
        return [f"the host {words[outcome.left_on]}" if outcome.left_on in words else outcome.left_on]
    return [f"{host}: {words.get(end, end)}" for host, end in outcome.left_on_by_host.items()]


def gate_json(gate: Any) -> dict[str, Any] | None:
    """The correctness gate's verdict for a JSON result: None when it did not run."""
    if gate is None:
        return None
    first = gate.divergences[0] if gate.divergences else None
    return {"passed": gate.passed, "divergences": len(gate.divergences), "note": gate.note,
            "first": {"prompt": first.prompt, "word": first.at_word, "reference": first.reference,
                      "candidate": first.candidate} if first else None}


def report(outcome: Any, path: Path, *, as_json: bool) -> None:
    """The sweep table and why the winner won (or the summary object with --json)."""
    plan = outcome.plan
    several = len(outcome.left_on_by_host) > 1
    if as_json:
        from specdec_tui.cli.common import rounded
        from specdec_tui.core.json_out import json_text

        print(json_text(rounded({
            "summary": True, "flag": plan.flag, "winner": outcome.promoted, "measured_winner": outcome.winner,
            "correctness": gate_json(outcome.gate), "reasons": outcome.reasons,
            "confidence": None if not outcome.choice or not outcome.choice.confidence else {
                "clear": outcome.choice.confidence.winner is not None, "text": outcome.choice.confidence.text,
                "samples_needed": outcome.choice.confidence.samples_needed, "runner_up": outcome.choice.runner_up,
                "repeats_needed": outcome.choice.repeats_needed, "run_noise": outcome.choice.confidence.noise},
            "clear_winner": bool(outcome.choice and outcome.choice.clear),
            "stopped": outcome.stopped, "left_on": outcome.left_on, "session": str(path),
            "curve": [dataclasses.asdict(p) for p in outcome.curve],
            "hosts": list(outcome.left_on_by_host), "host_of_value": outcome.host_of_value,
            "left_on_by_host": outcome.left_on_by_host, "host_failures": outcome.host_failures,
            "not_judged": outcome.past_stop,
        })), flush=True)
        return
    from specdec_tui.bench.validity import trials_sweep_warnings
    from specdec_tui.cli.render import make_console, sweep_table

    console = make_console()
    console.print(sweep_table(plan.flag, outcome.curve, outcome.choice))
    for warning in trials_sweep_warnings(t for ts in outcome.trials_by_value.values() for t in ts):
        console.print(f"⚠ {warning}", style="yellow", markup=False)  # the same caveats the benchmark gives
    if outcome.choice is not None:
        console.print(outcome.choice.headline(plan.flag), markup=False)
    console.print("why:" if outcome.winner else "no winner:")
    for reason in outcome.reasons:
        console.print(f"  - {reason}", markup=False)
    for value, trials in outcome.trials_by_value.items():
        for t in trials:
            if t.status == "failed":
                on = f" on {t.host}" if several else ""
                console.print(f"{plan.flag} {value}: trial {t.id}{on} failed — {t.failure}"
                              + (f" ({t.notes})" if t.notes else ""), markup=False)
    if outcome.stopped:
        console.print(f"stopped early: {outcome.stopped}", markup=False)
    if outcome.past_stop:
        console.print(f"{', '.join(outcome.past_stop)} ran on another host before the stop was known: "
                      "in the session, not judged", markup=False)
    if several:
        ran = ", ".join(f"{v} on {h}" for v, h in outcome.host_of_value.items())
        console.print(f"values ran: {ran}", markup=False)
    for host, reason in outcome.host_failures.items():
        console.print(f"{host} failed: {reason}", markup=False)
    if outcome.gate is not None:
        from specdec_tui.loop.correctness_gate import verdict_lines

        for line in verdict_lines(outcome.gate):
            console.print(line, markup=False)
    for line in where_left(outcome):
        console.print(line, markup=False)
    console.print(f"session saved to {path}", markup=False)
