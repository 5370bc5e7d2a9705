"""The demo cluster (`specdec-tui --demo --nodes N`): N demo workspaces on this machine forming one
multi-node server on loopback, so clusters can be rehearsed without GPUs or SSH.

Each node is a local host with a workspace of its own (its unit, history, journal); node 0's unit is the
demo unit, and every node's unit is derived from it by `core.cluster_units`, with a free loopback port for
the dist-init rendezvous written into the units (so it survives the panel's restarts).
"""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core import paths
from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.cluster_units import node_units
from specdec_tui.core.config import ClusterConfig, Config, HostConfig
from specdec_tui.hosts.local.workspace import DEMO_PROFILES, DemoWorkspace, ensure_demo_workspace, free_port

DEMO_CLUSTER = "demo-cluster"


def node_name(rank: int) -> str:
    return f"demo-{rank}"


def ensure_demo_cluster(root: Path | None = None, nodes: int = 2, *, time_scale: float = 1.0) -> Config:
    """The demo cluster's workspaces (created on first use, kept after) and a config naming them, the
    cluster being the default host. A node whose unit is not yet a cluster unit gets its derived unit."""
    if nodes < 2:
        raise ValueError("a demo cluster needs at least 2 nodes")
    base = Path(root) if root is not None else paths.demo_dir() / f"cluster-{nodes}"
    spaces = [ensure_demo_workspace(base / f"node{rank}", time_scale=time_scale) for rank in range(nodes)]
    head = spaces[0]
    hosts = {node_name(rank): _node_config(node_name(rank), ws, head) for rank, ws in enumerate(spaces)}
    cluster = ClusterConfig(name=DEMO_CLUSTER, nodes=tuple(hosts), dist_init_addr=f"127.0.0.1:{free_port()}")
    head_text = head.unit_path.read_text(encoding="utf-8")
    for unit, ws in zip(node_units(head_text, cluster, hosts), spaces, strict=True):
        if "--node-rank" not in ws.unit_path.read_text(encoding="utf-8"):  # a fresh node: not a user's edit
            write_atomic(ws.unit_path, unit.text)
    defaults = Config()
    return Config(hosts=hosts, clusters={DEMO_CLUSTER: cluster}, default_host=DEMO_CLUSTER,
                  profiles={**defaults.profiles, **DEMO_PROFILES}, default_profile="demo")


def _node_config(name: str, ws: DemoWorkspace, head: DemoWorkspace) -> HostConfig:
    return HostConfig(name=name, address="", unit=ws.unit_name, unit_path=str(ws.unit_path),
                      base_url=head.base_url, workspace=str(ws.root), healthy_timeout_s=120.0)
