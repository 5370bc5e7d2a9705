"""`specdec-tui tune`: the best speculative configuration for a latency target, searched in launches
(`loop.tune`), not walked as a grid.

    specdec-tui tune --host NAME [--host NAME …] --space FLAG=V1,V2,… [--space …] --slo ttft_p99=2s
        [--slo itl_p99=50ms] --concurrency 1,4,16,32 [--budget N] [--time-scale X] [--json]

Every launch is a trial in the host's current session as it lands; the same command run again after an
interruption resumes from those trials without repeating them. Progress goes to stderr; with --json the last
line of stdout is one object (best.flags, promoted, correctness, launches, failed, retried_failures, objective, level, schedule, …).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from specdec_tui.cli.common import load_cli_config, open_cli_host, progress
from specdec_tui.cli.errors import CliError
from specdec_tui.cli.sweep_cmd import _Hosts, add_gate_option, add_host_options, host_names, open_session, phase_line, sweep_profile
from specdec_tui.core.number_format import fmt_count


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `tune` command."""
    p = sub.add_parser("tune", help="search the speculative configuration with the most throughput under an SLO",
                       conflict_handler="resolve",
                       description="A model-based search over the --space: each launch (push, restart, every "
                                   "--concurrency level) teaches the model the whole surface; failed starts are "
                                   "learned as regions and never relaunched. The objective: for each "
                                   "configuration the highest total tok/s among its levels that meet every --slo "
                                   "term. Hosts are left on the unit they ran before.")
    add_host_options(p)
    p.add_argument("--host", action=_Hosts, default=argparse.SUPPRESS, metavar="NAME",
                   help="host from the config, or demo; give it several times to launch on identical hosts at once")
    p.add_argument("--space", action="append", required=True, metavar="FLAG=V1,V2,…",
                   help="a flag and its candidate values (speculative-num-steps=0 is the unit without speculation)")
    p.add_argument("--slo", action="append", required=True, metavar="TERM",
                   help="ttft_p99=2s or itl_p99=50ms (give both to require both)")
    p.add_argument("--concurrency", required=True, metavar="LIST", help="the levels each launch measures, e.g. 1,4,16,32")
    p.add_argument("--budget", type=int, default=24, metavar="N", help="at most N launches (restarts; default 24)")
    p.add_argument("--json", action="store_true", help="the result as one JSON object on the last stdout line")
    add_gate_option(p)
    p.add_argument("--profile", default=argparse.SUPPRESS, metavar="NAME",
                   help="benchmark profile from the config (its levels are replaced by --concurrency)")
    p.add_argument("--session", default=argparse.SUPPRESS, metavar="FILE",
                   help="session file to add the launches to and resume from (default: the host's current session)")
    p.add_argument("--new-session", action="store_true", default=argparse.SUPPRESS,
                   help="start a fresh session instead of continuing (and resuming from) the host's current one")
    # sweep_profile / bench_cmd.apply_overrides read these; the tune takes the host's profile as it is.
    p.set_defaults(func=run, duration=None, ignore_eos=None, endpoint=None, warmup=None, requests=None,
                   max_tokens=None, temperature=None, prompts=None)


def run(args: argparse.Namespace) -> int:
    from specdec_tui.core.slo import SloError
    from specdec_tui.core.tune_objective import parse_slo
    from specdec_tui.loop.tune import PlanError, TunePlan
    from specdec_tui.loop.tune_space import SpaceError, parse_space

    config, host_name = load_cli_config(args)
    names = host_names(args, host_name)
    repeated = next((n for n in names if names.count(n) > 1), None)
    if repeated is not None:
        raise CliError(f"--host {repeated} is given twice; name each host once")
    profile = sweep_profile(args, config, names[0])
    try:
        plan = TunePlan(space=parse_space(args.space), levels=tuple(profile.concurrency), slo=parse_slo(args.slo),
                        budget=args.budget)
    except PlanError as err:  # the plan's own limits, worded as the form words them; here as the options
        raise CliError(f"--{err}") from None
    except (SpaceError, SloError) as err:
        raise CliError(str(err)) from None
    hosts = [open_cli_host(config, name) for name in names]
    return asyncio.run(_run(args, config, names, hosts, profile, plan))


async def _run(args: argparse.Namespace, config: Any, names: list[str], hosts: list[Any], profile: Any,
               plan: Any) -> int:
    from specdec_tui.cli.tune_report import Printer, print_result
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.health import NotHealthy
    from specdec_tui.loop.host_group import ConnectFailed, HostGroup, with_host
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.loop.tune_host import run_host_tune
    from specdec_tui.loop.unit_checks import WorkflowError

    session, path = open_session(args, names[0], hosts[0].info.unit, profile)
    runners = [TrialLoop.for_host(host, config, session, host_name=name, session_path=path, profile=profile)
               for name, host in zip(names, hosts, strict=True)]
    try:
        async with HostGroup(list(zip(names, hosts, strict=True))):
            where = names[0] if len(names) == 1 else f"{len(names)} hosts at once ({', '.join(names)})"
            space = ", ".join(k + "=" + ",".join(v) for k, v in plan.space.items())
            progress(f"tuning on {where}: {space}; "
                     f"{plan.slo.words()} at concurrency {','.join(map(str, plan.levels))}; at most "
                     f"{fmt_count(plan.budget, 'launch', 'launches')}; session {path}")
            outcome = await run_host_tune(runners, plan, on_event=Printer(len(names) > 1, phase_line),
                                          adaptive_file=path.with_suffix(".adaptive.json"),
                                          correctness_gate=not args.no_correctness_gate)
    except WorkflowError as err:
        raise CliError(str(err)) from None
    except ConnectFailed as err:
        raise CliError(with_host(err, str(err))) from None
    except (HostError, NotHealthy) as err:  # past the connects: said as the first host's, as always
        raise CliError(f"{names[0]}: {err}") from None
    print_result(outcome, path, as_json=args.json)
    return 0 if outcome.promoted is not None else 1
