"""Headless `host` commands: the same push/restart/rollback/journal the panel does, from a shell —
handy for scripting and for checking SSH/sudo/host-key setup before opening the UI."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from specdec_tui.hosts.base import Host, HostError

ACTIONS = ("status", "cat", "push", "restart", "stop", "rollback", "journal")


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `host` command group."""
    host = sub.add_parser("host", help="drive the SGLang unit on a host: status, cat, push, restart, stop, rollback, journal")
    actions = host.add_subparsers(dest="host_command", metavar="ACTION", required=True)
    for name, help_text in (
        ("status", "systemd state of the unit"),
        ("cat", "print the unit file as it is on the host"),
        ("push", "atomically replace the unit with FILE (keeps a backup; systemd-analyze verify first)"),
        ("restart", "daemon-reload and restart the unit"),
        ("stop", "stop the unit"),
        ("rollback", "restore the newest backup over the unit (then run `host restart`)"),
        ("journal", "print the unit's journal"),
    ):
        action = actions.add_parser(name, help=help_text)
        # SUPPRESS: do not overwrite the top-level --host/--config when given before the command.
        action.add_argument("--host", default=argparse.SUPPRESS, metavar="NAME", help="host from the config")
        action.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE", help="config file")
        if name == "push":
            action.add_argument("file", metavar="FILE", help="the edited unit file")
        if name == "journal":
            action.add_argument("--follow", "-f", action="store_true", help="keep printing new lines")
            action.add_argument("-n", "--lines", type=int, default=50, help="lines of history (default 50)")
        action.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from specdec_tui.cli.main import CliError
    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.config_file import find_config_path, load_config
    from specdec_tui.hosts.factory import open_host

    try:
        config = load_config(find_config_path(getattr(args, "config", None)))
        # A script's `host restart` must leave the service running, as on a real systemd host.
        host = open_host(config, getattr(args, "host", None), keep_running=True)
    except (ConfigError, HostError) as err:
        raise CliError(str(err)) from None
    action: Callable[[Host, argparse.Namespace], Awaitable[int]] = HANDLERS[args.host_command]
    try:
        return asyncio.run(_with_host(host, args, action))
    except HostError as err:
        raise CliError(str(err)) from None


async def _with_host(host: Host, args: argparse.Namespace, action) -> int:
    await host.connect()
    try:
        return await action(host, args)
    finally:
        await host.close()


async def _status(host: Host, _args) -> int:
    s = await host.status()
    print(f"{s.unit}: {s.active_state} ({s.sub_state}) pid={s.main_pid or '-'} restarts={s.n_restarts} "
          f"result={s.result or '-'} since={s.active_enter.isoformat() if s.active_enter else '-'}")
    return 0 if s.is_running else 3  # 3: like `systemctl status` for a unit that is not running


async def _cat(host: Host, _args) -> int:
    sys.stdout.write(await host.read_unit())
    return 0


async def _push(host: Host, args) -> int:
    from specdec_tui.cli.main import CliError

    try:
        text = Path(args.file).read_text()
    except OSError as err:
        raise CliError(f"cannot read {args.file}: {err.strerror}") from None
    result = await host.push(text)
    if not result.changed:
        print(f"{result.unit}: unchanged (the host already has this text)")
    else:
        print(f"{result.unit}: pushed; previous version kept as backup {result.backup}" if result.backup
              else f"{result.unit}: pushed (it did not exist before)")
    return 0


async def _restart(host: Host, _args) -> int:
    result = await host.restart()
    s = result.status
    print(f"{s.unit}: job {result.job_result}; now {s.active_state} ({s.sub_state}) pid={s.main_pid or '-'}")
    return 0 if result.ok else 1


async def _stop(host: Host, _args) -> int:
    await host.stop()
    s = await host.status()
    print(f"{s.unit}: stopped; now {s.active_state} ({s.sub_state}) result={s.result or '-'}")
    return 0


async def _rollback(host: Host, _args) -> int:
    await host.rollback()
    left = await host.history()
    print(f"{host.info.unit}: restored the newest backup ({len(left)} older left); run `host restart` to apply")
    return 0


async def _journal(host: Host, args) -> int:
    stream = host.journal(follow=args.follow, lines=args.lines)
    try:
        async for record in stream:
            stamp = record.timestamp.astimezone().strftime("%H:%M:%S")
            prefix = "~~ " if record.kind == "gap" else ""
            print(f"{stamp} {prefix}{record.message}", flush=True)
    finally:
        await stream.aclose()
    return 0


HANDLERS = {
    "status": _status, "cat": _cat, "push": _push, "restart": _restart, "stop": _stop, "rollback": _rollback,
    "journal": _journal,
}
