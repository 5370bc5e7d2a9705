"""`--demo --nodes N` is refused in words outside 1..MAX_DEMO_NODES before anything is made: `--nodes 0` opened the
one-node demo as if it had not been given, and `--nodes 100000` made 4,596 node workspaces (54 MB) in its first
20 s on its way to 100,000 simulated servers (a newcomer's pass)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specdec_tui.core.paths import demo_dir

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("nodes", ["0", "100000"])
def test_a_demo_cluster_outside_its_range_is_refused_in_words_and_nothing_is_made(nodes: str) -> None:
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "--demo", "--nodes", nodes], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, (done.stdout[-500:], done.stderr)
    assert f"--nodes must be 1 to 16, not {nodes}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not demo_dir().exists() or not list(demo_dir().glob("cluster-*"))
