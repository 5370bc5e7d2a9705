"""Turn a host name from the config (or "demo") into a `Host`, so callers never pick an implementation.

SSHHost is imported only when an SSH host is asked for: the demo and the tests of the local host
must work without asyncssh being importable or configured.
"""

from __future__ import annotations

import re
from pathlib import Path

from specdec_tui.core.config import ClusterConfig, Config, HostConfig
from specdec_tui.hosts.base import Host, TwoPhaseHost
from specdec_tui.hosts.errors import HostError

LOCAL_ADDRESSES = ("", "local")
_DEFAULT_UNIT = HostConfig(name="").unit  # a local host that leaves `unit` unset runs the demo's unit


def is_local(host: HostConfig) -> bool:
    return host.address.strip().lower() in LOCAL_ADDRESSES


def pick_host_name(config: Config, name: str | None) -> str:
    """The explicit name, else the config's default host, else its only host, else the demo."""
    if name:
        return name
    if config.default_host:
        return config.default_host
    if len(config.hosts) == 1:
        return next(iter(config.hosts))
    if not config.hosts:
        return "demo"
    raise HostError(
        f"the config names several hosts ({', '.join(sorted(config.hosts))}) and no default_host",
        "pass --host NAME or set default_host in the config",
    )


def open_demo_host(
    name: str = "demo", root: Path | None = None, *, time_scale: float = 1.0, keep_running: bool = False,
    unit: str | None = None,
) -> Host:
    """A LocalHost on the demo workspace (created on first use), running `unit` (default: the demo's unit);
    see `LocalHost` for `keep_running`."""
    from specdec_tui.hosts.local.host import LocalHost
    from specdec_tui.hosts.local.workspace import DEMO_UNIT, ensure_demo_workspace

    ws = ensure_demo_workspace(root, time_scale=time_scale, unit=unit or DEMO_UNIT)
    return LocalHost(ws.root, ws.unit_name, ws.base_url, name=name, keep_running=keep_running)


def open_host(config: Config, name: str | None = None, *, keep_running: bool = False) -> Host:
    """The host `name` from the config: local ("" / "local" address, or "demo") or SSH.

    `keep_running` matters for local hosts only: True (headless commands) leaves a service they start
    running after the command exits, as on a real host; False (a panel) stops it when the host closes
    or the process dies. An SSH host's service is systemd's and always keeps running."""
    chosen = pick_host_name(config, name)
    cluster = config.clusters.get(chosen)
    if cluster is not None:
        return open_cluster(config, cluster, keep_running=keep_running)
    host_config = config.hosts.get(chosen)
    if host_config is None:
        if chosen == "demo":
            return open_demo_host(keep_running=keep_running)
        known = ", ".join(sorted([*config.hosts, *config.clusters])) or "none"
        raise HostError(
            f"no host named {chosen!r} in the config (configured: {known}; built in: demo)",
            "pick one of those with --host, or add a [hosts.<name>] table to the config",
        )
    return _open_configured(config, host_config, keep_running=keep_running)


def open_cluster(config: Config, cluster: ClusterConfig, *, keep_running: bool = False) -> Host:
    """A ClusterHost over the cluster's nodes, each opened as its [hosts.*] table says (node 0 first)."""
    from specdec_tui.hosts.cluster import ClusterHost

    nodes: list[tuple[HostConfig, TwoPhaseHost]] = []
    for node in cluster.nodes:
        host = _open_configured(config, config.hosts[node], keep_running=keep_running)
        if not isinstance(host, TwoPhaseHost):
            raise HostError(f"cluster {cluster.name!r}: host {node!r} cannot take part in an all-or-none push")
        nodes.append((config.hosts[node], host))
    return ClusterHost(cluster, nodes)


def _open_configured(config: Config, host_config: HostConfig, *, keep_running: bool) -> Host:
    chosen = host_config.name
    if is_local(host_config):
        root = Path(host_config.workspace).expanduser() if host_config.workspace else None
        unit = None if host_config.unit == _DEFAULT_UNIT else host_config.unit  # unset: the demo's unit
        if unit is not None and (not re.fullmatch(r"[A-Za-z0-9:_.@-]+", unit) or unit in (".", "..")):
            raise HostError(f"host {chosen!r}: unit {unit!r} is not a unit name",
                            "name the unit with letters, digits and :_.-@ only (e.g. sglang-a.service)")
        return open_demo_host(host_config.name, root, keep_running=keep_running, unit=unit)
    from specdec_tui.hosts.ssh.host import SSHHost  # asyncssh loads only when an SSH host is opened
    from specdec_tui.hosts.ssh.jump import resolve_jump

    try:
        return SSHHost(host_config, jump=resolve_jump(host_config, config.hosts))
    except ValueError as err:  # a unit / unit_path the remote commands refuse (the config loader checks it too)
        raise HostError(f"host {chosen!r}: {err}", "fix unit / unit_path in the host's config table") from None
