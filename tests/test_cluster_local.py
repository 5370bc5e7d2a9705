"""The demo cluster: two local demo hosts forming one simulated multi-node server on loopback, driven as
one host through `open_host` and the trial loop (push, stop-all/start-all, healthy, rollback, journal)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.base import ServiceStatus
from specdec_tui.hosts.cluster import ClusterHost, combine_status
from specdec_tui.hosts.factory import open_host
from specdec_tui.hosts.local.demo_cluster import DEMO_CLUSTER, ensure_demo_cluster
from specdec_tui.loop.trial import TrialLoop

PROFILE = BenchProfile(name="t", concurrency=(1,), requests=2, max_tokens=16, prompts="repetitive", warmup=0)


def test_status_is_the_worst_nodes_and_names_it() -> None:
    up = ServiceStatus(unit="u", active_state="active", sub_state="running", main_pid=10)
    down = ServiceStatus(unit="u", active_state="failed", sub_state="failed", exec_main_status=1, result="exit-code")
    combined = combine_status("u", [("n0", up), ("n1", down)])
    assert (combined.active_state, combined.sub_state, combined.result) == ("failed", "n0 active; n1 failed (exit-code)",
                                                                            "exit-code on n1")
    assert combined.main_pid == 10 and combined.exec_main_status == 1
    assert combine_status("u", [("n0", up), ("n1", up)]).active_state == "active"
    starting = ServiceStatus(unit="u", active_state="activating", sub_state="start")
    assert combine_status("u", [("n0", up), ("n1", starting)]).sub_state == "n0 active; n1 activating"


@pytest.fixture
async def cluster_runner(tmp_path: Path) -> AsyncIterator[TrialLoop]:
    config = ensure_demo_cluster(tmp_path / "cluster", 2, time_scale=40)
    host = open_host(config, DEMO_CLUSTER)
    assert isinstance(host, ClusterHost)
    runner = TrialLoop(host=host, session=Session(host=DEMO_CLUSTER, unit=host.info.unit, profile=PROFILE),
                       profile=PROFILE, base_url=host.info.base_url, session_path=tmp_path / "s.toml",
                       healthy_timeout_s=60)
    try:
        yield runner
    finally:
        await host.close()


def node_unit_bytes(host: ClusterHost) -> list[bytes]:
    return [Path(n.host.info.unit_path).read_bytes() for n in host.nodes]


async def test_a_trial_on_the_demo_cluster_runs_every_node_and_rolls_all_back(cluster_runner: TrialLoop) -> None:
    host = cluster_runner.host
    assert isinstance(host, ClusterHost)
    good = await cluster_runner.read_running()
    flags = UnitFile.parse(good).flags()
    assert (flags["nnodes"], flags["node-rank"]) == ("2", "0")
    first = await cluster_runner.run_trial(UnitFile.parse(good).set_flag("speculative-num-steps", "2").text,
                                           run_bench=False)
    assert first.status == "ok", first.failure
    status = await host.status()
    assert status.active_state == "active", status
    pushed = node_unit_bytes(host)
    assert [UnitFile.parse(b.decode()).get_flag("node-rank") for b in pushed] == ["0", "1"]
    assert all(UnitFile.parse(b.decode()).get_flag("speculative-num-steps") == "2" for b in pushed)
    # a unit no node can start: every node goes back, byte for byte, and the cluster is healthy again
    # (an unknown flag no longer reaches the nodes: the panel refuses it as 0.5.23's parser would; the simulator's
    # rehearsal failure is a start that fails after parsing)
    bad = await cluster_runner.run_trial(UnitFile.parse(good).set_flag("sim-fail", "cuda-graph-oom").text,
                                         run_bench=False)
    assert bad.status == "failed" and "CUDA out of memory" in bad.failure, bad.failure
    assert node_unit_bytes(host) == pushed
    assert (await host.status()).active_state == "active"
    # the journal shows both nodes, tagged, in time order
    records = [r async for r in host.journal(follow=False, lines=200)]
    assert {r.node for r in records} == {"demo-0", "demo-1"}
    assert [r.timestamp for r in records] == sorted(r.timestamp for r in records)


def test_a_cluster_journal_line_shows_its_node_and_keeps_its_colour() -> None:
    from datetime import datetime

    from specdec_tui.core.sglang.journal_text import format_record
    from specdec_tui.hosts.base import JournalRecord
    from specdec_tui.ui.widgets.journal_lines import line_runs

    # upstream: python/sglang/srt/entrypoints/http_server.py (the readiness line)
    message = "[2026-12-03 08:00:00] The server is fired up and ready to roll!"
    line = format_record(JournalRecord(cursor="c", timestamp=datetime(2026, 12, 3, 8, 0, 0), message=message,
                                       node="gpu-1"))
    assert line == f"08:00:00 [gpu-1] {message}"
    assert [names for _, names in line_runs(line, None)] == [("ready", "time"), ("ready",)]  # the whole line "ready"
