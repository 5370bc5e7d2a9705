"""A cluster of two real lab hosts (each its own systemd + sshd), driven as one host by `ClusterHost`.

The two labs share the machine's loopback, as the nodes of a cluster share a network: node 0's simulated
server listens on the dist-init port, node 1's joins it there, and only node 0 serves HTTP.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from specdec_tui.core.cluster_units import node_units
from specdec_tui.core.config import BenchProfile, ClusterConfig, HostConfig
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.cluster import ClusterHost
from specdec_tui.hosts.errors import ConnectionLost, UnitRejected
from specdec_tui.hosts.ssh.host import SSHHost
from specdec_tui.loop.trial import TrialLoop
from tests.hostlab.fixtures import server_exec, unit_text, wait_until_serving
from tests.hostlab.lab import HostLab, free_port

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(180)]

UNIT = "specdec-cluster.service"
PATH = f"/etc/systemd/system/{UNIT}"
PROFILE = BenchProfile(name="t", concurrency=(1,), requests=2, max_tokens=16, prompts="repetitive", warmup=0)


@dataclass
class Pair:
    labs: tuple[HostLab, HostLab]
    cluster: ClusterConfig
    configs: tuple[HostConfig, HostConfig]
    port: int
    base: str  # the one unit the operator edits

    def texts(self, text: str) -> list[bytes]:
        return [u.text.encode() for u in node_units(text, self.cluster, {c.name: c for c in self.configs})]

    def on_hosts(self) -> list[bytes]:
        return [lab.run(["cat", PATH]).stdout.encode() for lab in self.labs]

    def staged_leftovers(self) -> list[str]:
        return [lab.run(["ls", "-A", "/etc/systemd/system/.specdec/new"], check=False).stdout for lab in self.labs]

    def host(self, **node1: object) -> ClusterHost:
        nodes = []
        for lab, cfg in zip(self.labs, self.configs, strict=True):
            known = lab.root_dir / "known_hosts_cluster"
            known.write_text(lab.host_key_line())
            if cfg is self.configs[1] and node1:
                cfg = HostConfig(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, **node1})
            nodes.append((cfg, SSHHost(cfg, known_hosts=known, ssh_config=lab.ssh_config,
                                       client_keys=[lab.client_key], agent_path=None,
                                       reconnect_delays=(0.05, 0.1, 0.2))))
        return ClusterHost(self.cluster, nodes)


def install(lab: HostLab, text: bytes) -> None:
    lab.run(["systemctl", "stop", UNIT], check=False)
    lab.run(["systemctl", "reset-failed", UNIT], check=False)
    lab.run(["rm", "-rf", PATH, "/etc/systemd/system/.specdec"])
    lab.run(["tee", PATH], input=text.decode())
    lab.run(["systemctl", "daemon-reload"])


@pytest.fixture
def pair(hostlab: HostLab, hostlab2: HostLab) -> AsyncIterator[Pair]:
    port = free_port()
    cluster = ClusterConfig(name="pair", nodes=("n0", "n1"), dist_init_addr=f"127.0.0.1:{free_port()}")
    configs = (HostConfig(name="n0", address="hostlab", user="root", unit=UNIT, base_url=f"http://127.0.0.1:{port}"),
               HostConfig(name="n1", address="hostlab", user="root", unit=UNIT, base_url=f"http://127.0.0.1:{port}"))
    p = Pair((hostlab, hostlab2), cluster, configs, port, unit_text(server_exec(port, 3)))
    for lab, text in zip(p.labs, p.texts(p.base), strict=True):
        install(lab, text)
    for lab in p.labs:
        lab.run(["systemctl", "start", UNIT])
    wait_until_serving(hostlab, UNIT, port, timeout=60)
    yield p
    for lab in p.labs:
        lab.run(["systemctl", "stop", UNIT], check=False)
        lab.run(["rm", "-f", "/run/specdec-node-check", "/run/specdec-broken"], check=False)


def with_service_line(text: str, line: str) -> str:
    return text.replace("[Service]\n", f"[Service]\n{line}\n")


async def test_a_node_refusing_verify_changes_no_node(pair: Pair) -> None:
    before = pair.on_hosts()
    # An ExecStartPre program that exists on node 0 only: node 1's systemd-analyze verify refuses the unit.
    pair.labs[0].run(["sh", "-c", "printf '#!/bin/sh\\nexit 0\\n' > /run/specdec-node-check && "
                                  "chmod +x /run/specdec-node-check"])
    edited = with_service_line(UnitFile.parse(pair.base).set_flag("speculative-num-steps", "2").text,
                               "ExecStartPre=/run/specdec-node-check")
    host = pair.host()
    try:
        with pytest.raises(UnitRejected) as caught:
            await host.push(edited)
    finally:
        await host.close()
    message = str(caught.value)
    assert message.startswith("n1: systemd-analyze verify rejected the edited unit"), message
    assert "/run/specdec-node-check" in message and "no node was changed" in message
    assert pair.on_hosts() == before  # byte for byte, on both nodes
    assert pair.staged_leftovers() == ["", ""]  # node 0's staged copy was dropped too


async def test_a_node_failing_to_start_rolls_every_node_back(pair: Pair, tmp_path: Path) -> None:
    before = pair.on_hosts()
    host = pair.host()
    runner = TrialLoop(host=host, session=Session(host="pair", unit=UNIT, profile=PROFILE), profile=PROFILE,
                       base_url=pair.configs[0].base_url, session_path=tmp_path / "s.toml", healthy_timeout_s=60)
    try:
        good = await runner.read_running()
        assert good.encode() == before[0]
        # Node 1 only cannot start it: its ExecStartPre finds the marker, which exists on node 1 alone.
        pair.labs[1].run(["touch", "/run/specdec-broken"])
        bad = with_service_line(good, 'ExecStartPre=/bin/sh -c "test ! -e /run/specdec-broken"')
        trial = await runner.run_trial(bad, run_bench=False)
        assert trial.status == "failed"
        assert "systemd could not restart the unit (job failed" in trial.failure, trial.failure
        assert "healthy again" in trial.notes, trial.notes
        assert pair.on_hosts() == before  # every node back, byte-identical
        wait_until_serving(pair.labs[0], UNIT, pair.port, timeout=60)
        status = await host.status()
        assert status.active_state == "active", status
    finally:
        await host.close()


async def test_the_journal_merges_every_node_in_time_order_tagged(pair: Pair) -> None:
    host = pair.host()
    try:
        records = [r async for r in host.journal(follow=False, lines=120)]
        assert {r.node for r in records} == {"n0", "n1"}
        stamps = [r.timestamp for r in records]
        assert stamps == sorted(stamps)
        node0 = [r.message for r in records if r.node == "n0"]
        node1 = [r.message for r in records if r.node == "n1"]
        assert any("The server is fired up and ready to roll!" in m for m in node0)
        assert not any("ready to roll" in m for m in node1)  # rank 1 serves no HTTP
        assert any("Init parallel begin." in m for m in node1)
        # a cursor resumes every node where that record left it
        k = len(records) // 2
        rest = [r async for r in host.journal(after_cursor=records[k].cursor, follow=False)]
        assert [(r.node, r.message) for r in rest] == [(r.node, r.message) for r in records[k + 1:]]
        # filtered to one node
        only = [r async for r in host.journal(follow=False, lines=120, node="n1")]
        assert only and {r.node for r in only} == {"n1"}
        assert [r.message for r in only][-len(node1):] == node1
        # followed live from the last cursor: a restart of the cluster shows both nodes' new lines, tagged
        follow = host.journal(after_cursor=records[-1].cursor, follow=True)
        await host.restart()
        starts: set[str | None] = set()

        async def until_both_started() -> None:
            async for record in follow:
                if "Init parallel begin." in record.message:
                    starts.add(record.node)
                if starts == {"n0", "n1"}:
                    return

        await asyncio.wait_for(until_both_started(), 60)
        await follow.aclose()
    finally:
        await host.close()


async def test_a_cut_between_the_replaces_is_repaired_and_reported_node_by_node(pair: Pair) -> None:
    before = pair.on_hosts()
    lab1 = pair.labs[1]
    host = pair.host(connect_timeout_s=1.0)

    async def cut_node1(rank: int) -> None:
        if rank == 0:  # node 0 is replaced: node 1's link goes dead and stays dead
            lab1.freeze_sshd()
            for pid in lab1.session_pids():
                os.kill(pid, signal.SIGKILL)

    host.after_replace = cut_node1
    edited = UnitFile.parse(pair.base).set_flag("speculative-num-steps", "2").text
    try:
        await host.connect()
        with pytest.raises(ConnectionLost) as caught:
            await host.push(edited)
    finally:
        lab1.thaw_sshd()
        await host.close()
    message = str(caught.value)
    assert message.startswith("pair: the push stopped at n1"), message
    assert "n0: was replaced; put back to the previous unit" in message
    assert "n1: UNKNOWN — could not be checked or put back" in message
    assert pair.on_hosts() == before  # node 0 put back; node 1 never replaced
    # once node 1 is reachable again, the same push goes through on both
    again = pair.host()
    try:
        await again.push(edited)
    finally:
        await again.close()
    assert pair.on_hosts() == pair.texts(edited)
