"""One unit, N nodes: the unit each node of a [clusters.*] runs, derived from the one unit the operator edits.

A multi-node SGLang server is the same command on every node except `--node-rank`; `--nnodes` is the node
count and `--dist-init-addr` is node 0's rendezvous address (the same on every node). The operator edits one
text; this module is the one place that turns it into each node's text, so push, diff and the demo agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from specdec_tui.core.config import ClusterConfig, HostConfig
from specdec_tui.core.unit import UnitFile

LOCAL_NODE_ADDRESS = "127.0.0.1"  # a node with a local address (the demo) is reached on loopback


@dataclass(frozen=True, slots=True)
class NodeUnit:
    """The text node `rank` (the [hosts.*] table `node`) runs."""

    node: str
    rank: int
    text: str


def dist_init_addr(cluster: ClusterConfig, node0: HostConfig) -> str:
    """The cluster's `dist_init_addr`, else node 0's address with the cluster's `dist_init_port`."""
    if cluster.dist_init_addr:
        return cluster.dist_init_addr
    host = node0.address.strip() or LOCAL_NODE_ADDRESS
    if host.lower() == "local":
        host = LOCAL_NODE_ADDRESS
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 literal
    return f"{host}:{cluster.dist_init_port}"


def node_text(text: str, rank: int, nnodes: int, addr: str) -> str:
    """`text` with `--node-rank rank` and `--nnodes nnodes`; `--dist-init-addr addr` unless the text sets it."""
    unit = UnitFile.parse(text)
    flags: dict[str, str | None] = {"nnodes": str(nnodes), "node-rank": str(rank)}
    if not (unit.get_flag("dist-init-addr") or unit.get_flag("nccl-init-addr")):  # upstream's old alias counts
        flags["dist-init-addr"] = addr
    return unit.set_flags(flags).text


def node_units(text: str, cluster: ClusterConfig, hosts: Mapping[str, HostConfig]) -> list[NodeUnit]:
    """Every node's unit, node 0 first. Raises UnitSyntaxError (from core.unit) for a unit with no ExecStart."""
    addr = dist_init_addr(cluster, hosts[cluster.nodes[0]])
    count = len(cluster.nodes)
    return [NodeUnit(node, rank, node_text(text, rank, count, addr)) for rank, node in enumerate(cluster.nodes)]
