"""`--host CLUSTER` in the headless verbs, as a user runs them (a process), on a demo cluster of two local
nodes: status names every node's state, restart brings the whole cluster up, the journal tags each line with
its node and `--node` keeps one node's lines."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from specdec_tui.hosts.local.demo_cluster import DEMO_CLUSTER, ensure_demo_cluster

pytestmark = pytest.mark.timeout(180)


def cli(config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv, "--config", str(config)], capture_output=True,
                          text=True, timeout=150, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def cluster_config(tmp_path: Path) -> Iterator[Path]:
    config = ensure_demo_cluster(tmp_path / "cluster", 2, time_scale=40)
    lines = []
    for name, host in config.hosts.items():
        lines += [f'[hosts.{name}]', 'address = ""', f'unit = "{host.unit}"', f'workspace = "{host.workspace}"',
                  f'base_url = "{host.base_url}"', ""]
    nodes = ", ".join(f'"{n}"' for n in config.clusters[DEMO_CLUSTER].nodes)
    lines += [f"[clusters.{DEMO_CLUSTER}]", f"nodes = [{nodes}]", ""]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines))
    try:
        yield path
    finally:
        cli(path, "host", "stop", "--host", DEMO_CLUSTER)


def test_host_verbs_take_a_cluster_name(cluster_config: Path) -> None:
    down = cli(cluster_config, "host", "status", "--host", DEMO_CLUSTER)
    assert down.returncode == 3, down.stderr
    assert "inactive (demo-0 inactive; demo-1 inactive)" in down.stdout
    up = cli(cluster_config, "host", "restart", "--host", DEMO_CLUSTER)
    assert up.returncode == 0, (up.stdout, up.stderr)
    status = cli(cluster_config, "host", "status", "--host", DEMO_CLUSTER)
    assert status.returncode == 0 and ": active (demo-0 active; demo-1 active)" in status.stdout, status.stdout
    journal = cli(cluster_config, "host", "journal", "--host", DEMO_CLUSTER, "-n", "100")
    assert journal.returncode == 0, journal.stderr
    tags = {line.split(" ", 2)[1] for line in journal.stdout.splitlines() if line.strip()}
    assert {"[demo-0]", "[demo-1]"} <= tags
    one = cli(cluster_config, "host", "journal", "--host", DEMO_CLUSTER, "-n", "100", "--node", "demo-1")
    assert one.returncode == 0 and one.stdout.strip(), one.stderr
    assert {line.split(" ", 2)[1] for line in one.stdout.splitlines() if line.strip()} == {"[demo-1]"}
    cat = cli(cluster_config, "host", "cat", "--host", DEMO_CLUSTER)
    assert "--node-rank 0" in cat.stdout and "--nnodes 2" in cat.stdout
