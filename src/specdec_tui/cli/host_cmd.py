"""Headless `host` commands: the same push/restart/rollback/journal the panel does, from a shell —
handy for scripting and for checking SSH/sudo/host-key setup before opening the UI."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from specdec_tui.cli.common import (
    add_target_options,
    healthy_timeout_of,
    load_cli_config,
    open_cli_host,
    progress,
)
from specdec_tui.cli.errors import CliError
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.unit_checks import api_key_from

if TYPE_CHECKING:
    from specdec_tui.core.config import HostConfig
    from specdec_tui.loop.sglang_release import Release

ACTIONS = ("status", "cat", "push", "restart", "stop", "rollback", "journal")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `host` command group."""
    host = sub.add_parser("host", help="drive the SGLang unit on a host: status, cat, push, restart, stop, rollback, journal")
    actions = host.add_subparsers(dest="host_command", metavar="ACTION", required=True)
    for name, help_text in (
        ("status", "systemd state of the unit"),
        ("cat", "print the unit file as it is on the host"),
        ("push", "atomically replace the unit with FILE (keeps a backup; systemd-analyze verify first)"),
        ("restart", "daemon-reload and restart the unit"),
        ("stop", "stop the unit"),
        ("rollback", "restore the newest backup over the unit, daemon-reload, restart and wait until healthy"),
        ("journal", "print the unit's journal"),
    ):
        action = actions.add_parser(name, help=help_text)
        add_target_options(action)
        if name == "push":
            action.add_argument("file", metavar="FILE", help="the edited unit file")
        if name == "rollback":
            action.add_argument("--no-restart", action="store_true",
                                help="only restore the file (and daemon-reload); the server keeps running its "
                                     "current flags until `host restart`")
        if name == "journal":
            action.add_argument("--follow", "-f", action="store_true", help="keep printing new lines")
            action.add_argument("-n", "--lines", type=int, default=50, help="lines of history (default 50)")
            action.add_argument("--node", metavar="NAME", help="a cluster's journal: only this node's lines")
        action.set_defaults(func=run)


@dataclass(frozen=True, slots=True)
class Target:
    """The host a command acts on, with its settings from the config (None for a host not in it)."""

    name: str
    settings: HostConfig | None


def run(args: argparse.Namespace) -> int:
    config, name = load_cli_config(args)
    # A script's `host restart` must leave the service running, as on a real systemd host.
    host = open_cli_host(config, name, keep_running=True)
    target = Target(name, config.host_settings(name))
    action: Callable[[Host, argparse.Namespace, Target], Awaitable[int]] = HANDLERS[args.host_command]
    from specdec_tui.loop.busy import Refused

    try:
        return asyncio.run(_with_host(host, args, target, action))
    except (HostError, Refused) as err:  # Refused: `rollback` on a host a sweep or tune holds (loop.host_hold)
        raise CliError(str(err)) from None


async def _with_host(host: Host, args: argparse.Namespace, target: Target,
                     action: Callable[[Host, argparse.Namespace, Target], Awaitable[int]]) -> int:
    await host.connect()
    try:
        return await action(host, args, target)
    finally:
        await host.close()


async def _status(host: Host, _args: argparse.Namespace, _target: Target) -> int:
    s = await host.status()
    print(terminal_safe(f"{s.unit}: {s.active_state} ({s.sub_state}) pid={s.main_pid or '-'} restarts={s.n_restarts} "
                        f"result={s.result or '-'} since={s.active_enter.isoformat() if s.active_enter else '-'}"))
    return 0 if s.is_running else 3  # 3: like `systemctl status` for a unit that is not running


async def _cat(host: Host, _args: argparse.Namespace, _target: Target) -> int:
    text = await host.read_unit()  # exact into a file or a pipe; as words only on a terminal
    sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
    return 0


async def _push(host: Host, args: argparse.Namespace, _target: Target) -> int:
    from specdec_tui.cli.unit_cmd import read_unit_text  # exact bytes, and words for a file that is not UTF-8
    from specdec_tui.loop.unit_checks import WorkflowError
    from specdec_tui.loop.unit_push import checked_push

    text = read_unit_text(args.file)
    release = await _hosts_release(host, text)
    try:  # the panel's rules: hidden keys from the host's unit, a unit that cannot run refused
        _, result = await checked_push(host, text, schema=release.schema)
    except WorkflowError as err:
        raise CliError(f"{args.file} was not pushed (judged by SGLang {release.version}): {err}") from None
    if not result.changed:
        print(f"{result.unit}: unchanged (the host already has this text)")
    else:
        print(f"{result.unit}: pushed; previous version kept as backup {result.backup}" if result.backup
              else f"{result.unit}: pushed (it did not exist before)")
    return 0


async def _hosts_release(host: Host, text: str) -> Release:
    """The release that judges the push, as the panel's `p` has it (said on stderr when it is not the host's)."""
    from specdec_tui.core.exec_start import ExecStart
    from specdec_tui.core.unit import UnitFile, UnitSyntaxError
    from specdec_tui.loop.sglang_release import learn_release

    try:
        exec_start = UnitFile.parse(text).exec_start
    except UnitSyntaxError:
        exec_start = ExecStart("", [])  # checked_push says what is wrong with it
    release = await learn_release(host, exec_start)
    if release.note:
        print(f"note: {release.note}", file=sys.stderr, flush=True)
    return release


async def _restart(host: Host, _args: argparse.Namespace, _target: Target) -> int:
    result = await host.restart()
    s = result.status
    print(f"{s.unit}: job {result.job_result}; now {s.active_state} ({s.sub_state}) pid={s.main_pid or '-'}")
    return 0 if result.ok else 1


async def _stop(host: Host, _args: argparse.Namespace, _target: Target) -> int:
    await host.stop()
    s = await host.status()
    print(f"{s.unit}: stopped; now {s.active_state} ({s.sub_state}) result={s.result or '-'}")
    return 0


async def _rollback(host: Host, args: argparse.Namespace, target: Target) -> int:
    """Restore the newest backup, daemon-reload, restart and wait until the server is healthy again — what
    `u` does in the panel. `--no-restart` restores the file alone."""

    unit = host.info.unit
    if not await host.history():
        raise CliError(f"{unit}: there is no backup to roll back to on {target.name} "
                       "(each `host push` that changes the unit keeps one)")
    before = await host.read_unit()
    if args.no_restart:
        restored = await host.rollback()
        print(f"{unit}: restored the newest backup ({restored_changes(before, restored)}; "
              f"{len(await host.history())} older backup(s) left)", flush=True)
        print(f"{unit}: not restarted (--no-restart): the server keeps running its current flags until "
              f"`specdec-tui host restart --host {target.name}`", flush=True)
        return 0
    return await _rollback_with_trial_loop(host, target, before)


async def _rollback_with_trial_loop(host: Host, target: Target, before: str) -> int:
    """`TrialLoop.rollback`, the code path of the panel's `u`: restore, restart, wait healthy; its events
    are printed as they come, a failure in words (the journal's cause rides along)."""
    from specdec_tui.core.config import BenchProfile
    from specdec_tui.core.session import Session
    from specdec_tui.loop.events import Healthy, LoopEvent, Restarted, RolledBack, StepFailed
    from specdec_tui.loop.trial import TrialLoop

    unit = host.info.unit
    timeout = healthy_timeout_of(target.settings)
    trial_loop = TrialLoop(host=host, session=Session(host=target.name, unit=unit), profile=BenchProfile(),
                     base_url=host.info.base_url, api_key=api_key_from(target.settings), healthy_timeout_s=timeout)
    failed: list[str] = []
    model: list[str] = []

    def say(event: LoopEvent) -> None:
        if isinstance(event, RolledBack):
            print(f"{unit}: restored the newest backup ({restored_changes(before, event.text)})", flush=True)
        elif isinstance(event, Restarted) and event.result.ok:
            progress(f"{unit}: restarted (pid {event.result.status.main_pid or '-'}); waiting for "
                     f"{host.info.base_url} to be ready (up to {timeout:.0f} s)…")
        elif isinstance(event, Healthy) and event.facts is not None and event.facts.model:
            model.append(event.facts.model)
        elif isinstance(event, StepFailed):
            failed.append(event.reason)

    trial_loop.sink = say
    restored = await trial_loop.rollback()
    if restored is None or failed:
        what = failed[-1] if failed else "the rollback did not finish"
        raise CliError(f"{unit}: {what}; see `specdec-tui host journal --host {target.name}`")
    print(f"{unit}: healthy again on the restored unit" + (f" (model {terminal_safe(model[-1])})" if model else ""),
          flush=True)
    return 0


def restored_changes(before: str, restored: str) -> str:
    """What the rollback changed, in flags: `--speculative-num-steps 4 → 3`; in words when they cannot be read."""
    from specdec_tui.core.unit import UnitFile, UnitSyntaxError
    from specdec_tui.core.unit_diff import flag_changes

    if before == restored:
        return "the same text as before"
    try:
        changes = flag_changes(UnitFile.parse(before), UnitFile.parse(restored))
    except UnitSyntaxError:
        return "the flags could not be compared"
    if not changes:
        return "no flag changes, other lines differ"

    def shown(value: str | None) -> str:
        return "absent" if value is None else value or "(switch)"

    return ", ".join(f"--{c.name} {shown(c.old)} → {shown(c.new)}" for c in changes)


async def _journal(host: Host, args: argparse.Namespace, _target: Target) -> int:
    from specdec_tui.hosts.cluster import ClusterHost

    node = getattr(args, "node", None)
    if node and not isinstance(host, ClusterHost):
        raise CliError(f"--node picks a node of a cluster; {host.info.name} is a single host")
    stream = (host.journal(follow=args.follow, lines=args.lines, node=node) if isinstance(host, ClusterHost)
              else host.journal(follow=args.follow, lines=args.lines))
    try:
        async for record in stream:
            stamp = record.timestamp.astimezone().strftime("%H:%M:%S")
            prefix = "~~ " if record.kind == "gap" else ""
            tag = f"[{record.node}] " if record.node else ""
            print(f"{stamp} {tag}{prefix}{terminal_safe(record.message)}", flush=True)
    finally:
        if isinstance(stream, AsyncGenerator):  # a follower holds a channel or a process: end it now, not at GC
            await stream.aclose()
    return 0


HANDLERS = {
    "status": _status, "cat": _cat, "push": _push, "restart": _restart, "stop": _stop, "rollback": _rollback,
    "journal": _journal,
}
