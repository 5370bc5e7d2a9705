"""Which hosts are one server: the same machine and the same unit. The one rule the fleet, a parallel sweep and a
tune call before they drive several hosts at once.

Why: rehearsal hosts without their own `workspace` all run the shared demo workspace's unit, so a sweep "on three
hosts" pushed three values into one unit at once and recorded trials measured on another value's server. Two
names for one machine+unit measure nothing twice; they are refused, named, before anything is pushed.

What counts as the same: a local host's unit file (its workspace and unit name: that is the server it runs); an
SSH host's address, port and unit file path (an alias in ~/.ssh/config for the same machine is not resolved).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from specdec_tui.hosts.base import HostInfo


def server_key(info: HostInfo) -> tuple[str, ...]:
    """What identifies the server a host drives: machine and unit."""
    if info.kind == "local":
        return ("local", os.path.realpath(info.unit_path))
    return ("ssh", info.address.strip().lower(), info.extra.get("port") or "22", info.unit_path)


def same_server_groups(hosts: Sequence[tuple[str, HostInfo]]) -> list[list[str]]:
    """The names that share a server, in the order given (groups of two or more only)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, info in hosts:
        groups.setdefault(server_key(info), []).append(name)
    return [names for names in groups.values() if len(names) > 1]


def describe_same_server(names: Sequence[str], info: HostInfo) -> str:
    """"hosts a, b and c are one server (unit sglang-demo.service in /x/units)" and what to do instead."""
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    where = (f"the unit {info.unit} of the workspace {os.path.dirname(os.path.dirname(info.unit_path))}"
             if info.kind == "local" else f"{info.unit_path} on {info.address}")
    fix = ("give each rehearsal host its own `workspace` (or its own `unit`) in the config"
           if info.kind == "local" else "name each machine once")
    return f"hosts {listed} are one server ({where}): driving them at once would measure one server; {fix}"


class SameServer(ValueError):
    """Several hosts asked to run at once are one machine and unit; the message names them."""


def refuse_same_server(hosts: Sequence[tuple[str, HostInfo]]) -> None:
    """Raises SameServer naming the first group of hosts that share a server."""
    by_name = dict(hosts)
    for names in same_server_groups(hosts):
        raise SameServer(describe_same_server(names, by_name[names[0]]))
