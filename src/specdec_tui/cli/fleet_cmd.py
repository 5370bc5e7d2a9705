"""Headless `fleet status [--json]`: every configured host at a glance (health, model, speculative settings, max
running requests, the running configuration's c=1 and best tok/s (within the TTFT limit), journal errors since the
unit last started), polled at once."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from specdec_tui.cli.errors import CliError

if TYPE_CHECKING:
    from rich.table import Table

    from specdec_tui.core.config import Config
    from specdec_tui.loop.fleet import FleetRow

STATE_STYLES = {"ready": "bold green", "failing": "bold red", "unreachable": "bold red", "down": "dim",
                "loading": "yellow", "warming up": "yellow", "starting": "yellow"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fleet = sub.add_parser("fleet", help="every configured host at a glance")
    fleet_sub = fleet.add_subparsers(dest="fleet_command", metavar="SUBCOMMAND", required=True)
    status = fleet_sub.add_parser(
        "status", help="poll every host at once and print one row each",
        description="Poll every host of the config concurrently (one unreachable host slows no other) and print "
                    "health, model, speculative settings, max running requests, last/best tok/s and journal errors.",
    )
    status.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                        help="config file (default: $SPECDEC_TUI_CONFIG, then the user config dir)")
    status.add_argument("--host", action="append", metavar="NAME", dest="hosts",
                        help="only this host (repeat for several; default: every host in the config)")
    status.add_argument("--timeout", type=float, default=5.0, metavar="S",
                        help="seconds one host may take before it is shown as unreachable (default 5)")
    status.add_argument("--json", action="store_true", help="print the rows as JSON")
    status.epilog = "Exit status 3 when a host is unreachable or failing, else 0."
    status.set_defaults(func=run_status)


def run_status(args: argparse.Namespace) -> int:
    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.config_file import find_config_path, load_config
    from specdec_tui.core.paths import sessions_dir
    from specdec_tui.loop.fleet import FleetPoller, fleet_names
    from specdec_tui.loop.same_server import SameServer

    try:
        config = load_config(find_config_path(getattr(args, "config", None)))
    except ConfigError as err:
        raise CliError(str(err)) from None
    if (not fleet_names(config) or "demo" in (args.hosts or ())) and "demo" not in config.hosts:
        config = with_demo_host(config)  # as every other verb's --host demo, and as the panel's Fleet tab
    known = fleet_names(config)
    names = args.hosts or known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CliError(f"no host named {', '.join(map(repr, unknown))} in the config "
                       f"(configured: {', '.join(known) or 'none'}) — pick one of those with --host, or add a "
                       "[hosts.<name>] table to the config")
    if args.timeout <= 0:
        raise CliError("--timeout must be greater than 0")

    async def poll_once() -> list[FleetRow]:
        poller = FleetPoller(config, names=names, sessions_dir=sessions_dir(), timeout_s=args.timeout)
        try:
            return await poller.poll()
        finally:
            await poller.close()

    try:
        rows = asyncio.run(poll_once())
    except SameServer as err:
        raise CliError(f"fleet status refused: {err}") from None
    if args.json:
        from specdec_tui.cli.common import rounded
        from specdec_tui.core.json_out import json_bytes
        from specdec_tui.loop.fleet import rows_as_json

        sys.stdout.buffer.write(json_bytes(rounded(rows_as_json(rows)), indent=True) + b"\n")
    else:
        from specdec_tui.cli.render import make_console

        make_console().print(fleet_table(rows))
    return 3 if any(r.state in ("unreachable", "failing") for r in rows) else 0


def with_demo_host(config: Config) -> Config:
    """The config with the demo host added (its workspace created if it is not there yet; nothing started)."""
    import dataclasses

    from specdec_tui.hosts.local.workspace import demo_host_config, ensure_demo_workspace

    return dataclasses.replace(config, hosts={**config.hosts, "demo": demo_host_config(ensure_demo_workspace())})


def fleet_table(rows: list[FleetRow]) -> Table:
    from rich.table import Table
    from rich.text import Text

    from specdec_tui.core.number_format import fmt_fixed

    table = Table(title=f"fleet: {len(rows)} host{'s' if len(rows) != 1 else ''}")
    for column, justify in (("host", "left"), ("state", "left"), ("model", "left"), ("speculative", "left"),
                            ("max run", "right"), ("c=1 tok/s", "right"), ("best tok/s ≤TTFT", "right"), ("errors", "right"),
                            ("doctor", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        state = Text(r.state, style=STATE_STYLES.get(r.state, ""))
        if r.state not in ("ready", "down"):
            state.append(f" ({r.detail})", style="dim")
        errors = Text(str(r.errors_since_start), style="bold red" if r.errors_since_start else "dim")
        if r.cause:
            errors.append(f" {r.cause[:60]}", style="red")
        table.add_row(r.name, state, r.model or "–", r.spec_text,
                      str(r.max_running_requests) if r.max_running_requests is not None else "–",
                      fmt_fixed(r.last_c1_tok_s), fmt_fixed(r.best_tok_s), errors,
                      Text(", ".join(r.findings), style="bold yellow") if r.findings else Text("–", style="dim"))
    return table
