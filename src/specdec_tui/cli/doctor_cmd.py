"""Headless `doctor --host NAME [--since 10m] [--json]`: what is wrong with a host now, each finding with its
evidence, its cost and the flag edit that fixes it. Exit 0 with no findings, 3 with findings (scripts rely on it)."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from datetime import timedelta
from typing import TYPE_CHECKING

from specdec_tui.cli.common import add_target_options, load_cli_config, open_cli_host
from specdec_tui.cli.errors import CliError

if TYPE_CHECKING:
    from specdec_tui.hosts.base import Host
    from specdec_tui.loop.doctor import DoctorReport

EXIT_FINDINGS = 3
_SPAN = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>s|m|h|d)$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MAX_SPAN_S = 3650 * 86400


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = sub.add_parser(
        "doctor", help="name what is wrong with a host now (cliffs, collapses, failed starts) and the fix",
        description="Read the host's journal since its unit last started (or --since) and name each finding: "
                    "eager fallback, capacity bound, acceptance collapse or drift, adaptive flapping, start failure.",
    )
    add_target_options(doctor)
    doctor.add_argument("--since", type=parse_span, default=None, metavar="SPAN",
                        help="evidence window, e.g. 90s, 10m, 2h (default: since the unit's current start)")
    doctor.add_argument("--json", action="store_true", help="print one JSON object with `findings`")
    doctor.add_argument("--recover", action="store_true",
                        help="opt-in (or auto_recover = true in the host's table): when the unit's start failed, "
                             "push the next rung of upstream's OOM ladder and restart (at most 2 restarts); if it "
                             "still fails, go back to the unit before (the last backup) and restart")
    doctor.epilog = "Exit status 0 with no findings, 3 with findings."
    doctor.set_defaults(func=run)


def parse_span(text: str) -> timedelta:
    match = _SPAN.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time span — write e.g. 90s, 10m, 2h")
    seconds = float(match["n"]) * _UNIT_S[match["unit"]]
    if seconds > _MAX_SPAN_S:  # further back than any journal; datetime overflows before year 1
        raise argparse.ArgumentTypeError(f"{text!r} is longer than any journal — at most 3650d")
    return timedelta(seconds=seconds)


def run(args: argparse.Namespace) -> int:
    config, name = load_cli_config(args)
    host = open_cli_host(config, name, keep_running=True)
    settings = config.host_settings(name)
    recover = args.recover or (settings is not None and settings.auto_recover)
    report = asyncio.run(_examine(host, name, args.since, recover=recover))
    if args.json:
        from specdec_tui.core.json_out import json_bytes
        from specdec_tui.loop.doctor import findings_as_json

        sys.stdout.buffer.write(json_bytes(findings_as_json(report), indent=True) + b"\n")
    else:
        _print(report)
    return EXIT_FINDINGS if report.findings else 0


async def _examine(host: Host, name: str, since: timedelta | None, *, recover: bool = False) -> DoctorReport:
    from specdec_tui.core.doctor_rules import FindingKind
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.loop.doctor import examine

    try:
        await host.connect()
        try:
            report = await examine(host, name, since=since)
            if recover and any(f.kind is FindingKind.START_FAILURE for f in report.findings):
                await _recover(host)
                report = await examine(host, name)
            return report
        finally:
            await host.close()
    except HostError as err:
        raise CliError(f"could not read host {name!r}: {err.message}") from None


async def _recover(host: Host) -> None:
    from specdec_tui.cli.common import progress
    from specdec_tui.loop.recovery import recover_start

    history = await host.history()
    last_good = await host.read_backup(history[-1]) if history else None
    result = await recover_start(host, last_good=last_good)
    for step in result.steps:
        progress(f"recovery: {step.words} → {'came up' if step.came_up else 'failed again'}")
    if not result.recovered:
        back = "back on the previous unit" if result.back_on_good else "no previous unit to go back to"
        progress(f"recovery: not recovered after {result.restarts} restart(s); {back} {result.note}".rstrip())


def _print(report: DoctorReport) -> None:
    from specdec_tui.cli.render import make_console
    from specdec_tui.core.doctor_rules import clock

    console = make_console()
    if not report.findings:
        console.print(f"{report.host}: no findings since {clock(report.window_start)}", markup=False)
        return
    for f in report.findings:
        console.print(f"[bold]{f.kind.value}[/] ({f.severity.value}) since {clock(f.since)}", highlight=False)
        console.print(f"  cost: {f.cost}", markup=False)
        for e in f.evidence:
            console.print(f"  {clock(e.time)}  {e.line}", markup=False)
        edits = [f"--{k} {v}" if v is not None else f"--{k}" for k, v in f.fix.items()]
        edits += [f"remove --{k}" for k in f.remove]
        console.print(f"  fix: {', '.join(edits) or 'no flag edit'} — {f.fix_words}", markup=False)
