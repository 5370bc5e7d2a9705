"""The fleet view's poller and `specdec-tui fleet status`, on real demo hosts (each with its own workspace and
simulated server), a host that never answers, and the lab's real sshd (one reused connection per host)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from specdec_tui.core.config import Config, HostConfig
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, save_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.fleet import UNREACHABLE, FleetPoller
from tests.hostlab.fixtures import UNIT
from tests.hostlab.lab import HostLab

FAST = 50.0


def demo_host(tmp_path: Path, name: str) -> HostConfig:
    ws = ensure_demo_workspace(tmp_path / name, time_scale=FAST)
    return HostConfig(name=name, address="local", workspace=str(ws.root))


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (a host whose sshd hangs)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


async def wait_state(poller: FleetPoller, name: str, state: str, timeout: float = 60) -> dict[str, object]:
    async def until() -> dict[str, object]:
        while True:
            row = next(r for r in await poller.poll() if r.name == name)
            if row.state == state:
                return row.__dict__ if hasattr(row, "__dict__") else {f: getattr(row, f) for f in row.__slots__}
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(until(), timeout)


async def test_one_silent_host_shows_unreachable_and_slows_no_other(tmp_path: Path, silent_port: int) -> None:
    config = Config(hosts={
        "a": demo_host(tmp_path, "a"), "b": demo_host(tmp_path, "b"),
        "hung": HostConfig(name="hung", address="127.0.0.1", port=silent_port, connect_timeout_s=30),
    })
    poller = FleetPoller(config, timeout_s=3.0)
    try:
        rows = {r.name: r for r in await poller.poll()}
    finally:
        await poller.close()
    assert rows["hung"].state == UNREACHABLE and "no answer within 3 s" in rows["hung"].detail
    assert rows["hung"].spec_text == "–"
    for name in ("a", "b"):
        assert rows[name].state == "down" and rows[name].spec_text == "NEXTN steps=1 topk=1 draft=2"
        assert rows[name].took_s < 1.5, rows[name]  # polled beside the hung host, not after it


async def test_a_ready_host_shows_what_it_serves_its_last_trial_and_its_errors(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    config = Config(hosts={"a": demo_host(tmp_path, "a")})
    poller = FleetPoller(config, sessions_dir=sessions)
    host = poller._open(config, "a")
    running = UnitFile.parse(await host.read_unit())
    other = running.set_flag("speculative-num-steps", "3")

    def trial(tid: int, unit: UnitFile, c1: float, c16: float, c64: float, status: str = "ok") -> Trial:
        return Trial(id=tid, unit_text=unit.text, flags=unit.flags(), status=status, levels=[
            LevelResult(concurrency=1, output_tok_s=c1, ttft_ms=Dist(p99=150.0)),
            LevelResult(concurrency=16, output_tok_s=c16, ttft_ms=Dist(p99=900.0)),
            LevelResult(concurrency=64, output_tok_s=c64, ttft_ms=Dist(p99=13400.0))])  # the peak: a queue

    # Issue 35 (8): "best tok/s" was the peak of any trial, another configuration's among them; it is the best
    # within the TTFT limit of the latest finished trial of the unit the host runs.
    trials = [trial(1, running, 123.4, 812.5, 900.0), trial(2, other, 200.0, 1000.0, 1100.0),
              trial(3, running, 99.0, 99.0, 99.0, status="cancelled")]
    save_session(Session(host="a", unit="sglang-demo.service", trials=trials), sessions / "a.toml")
    save_session(Session(host="b", unit="sglang-demo.service", trials=[]), sessions / "b.toml")
    try:
        await host.restart()
        ready = await wait_state(poller, "a", "ready")
        assert ready["model"] == "qwen" and ready["max_running_requests"] == 26
        assert (ready["last_c1_tok_s"], ready["best_tok_s"]) == (123.4, 812.5)
        assert ready["errors_since_start"] == 0
        # A unit that crashes after it is ready: the row turns failing and counts the journal's error lines.
        text = (await host.read_unit()).replace("--port", "--sim-fail crash-after-ready --port", 1)
        await host.push(text)
        await host.restart()
        failing = await wait_state(poller, "a", "failing")
        assert failing["errors_since_start"] >= 1 and "illegal memory access" in str(failing["cause"])
    finally:
        await host.stop()
        await host.close()
        await poller.close()


def test_fleet_status_cli_prints_json_and_a_table(tmp_path: Path, silent_port: int) -> None:
    config = tmp_path / "config.toml"
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=FAST)
    config.write_text(f'[hosts.a]\naddress = "local"\nworkspace = "{ws.root}"\n'
                      f'[hosts.hung]\naddress = "127.0.0.1"\nport = {silent_port}\n')
    env = {**os.environ, "COLUMNS": "160"}
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "fleet", "status", "--config", str(config), "--json",
                          "--timeout", "2"], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 3, run.stderr  # a host is unreachable
    rows = {r["name"]: r for r in json.loads(run.stdout)}
    assert rows["a"]["state"] == "down" and rows["a"]["speculative"]["algorithm"] == "NEXTN"
    assert rows["hung"]["state"] == "unreachable"
    table = subprocess.run([sys.executable, "-m", "specdec_tui", "fleet", "status", "--config", str(config),
                            "--host", "a"], capture_output=True, text=True, timeout=60, env=env)
    assert table.returncode == 0, table.stderr
    assert "fleet: 1 host" in table.stdout and "NEXTN steps=1 topk=1 draft=2" in table.stdout
    bad = subprocess.run([sys.executable, "-m", "specdec_tui", "fleet", "status", "--config", str(config),
                          "--host", "nope"], capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 1 and "no host named 'nope'" in bad.stderr and "Traceback" not in bad.stderr


async def test_an_ssh_host_is_polled_over_one_reused_connection(hostlab: HostLab, lab_service) -> None:
    hostlab.known_hosts.write_text(hostlab.host_key_line())
    from specdec_tui.hosts.ssh.host import SSHHost

    def opener(config: Config, name: str) -> SSHHost:
        return SSHHost(config.hosts[name], known_hosts=hostlab.known_hosts, ssh_config=hostlab.ssh_config,
                       client_keys=[hostlab.client_key], agent_path=None)

    config = Config(hosts={"lab": HostConfig(name="lab", address="hostlab", user="root", unit=UNIT,
                                             base_url=lab_service.base_url)})
    before = set(hostlab.session_pids())
    poller = FleetPoller(config, opener=opener)
    try:
        rows = [(await poller.poll())[0] for _ in range(3)]
        during = set(hostlab.session_pids()) - before
    finally:
        await poller.close()
    assert [r.state for r in rows] == ["ready"] * 3
    assert rows[0].spec_text == "EAGLE steps=3 topk=1 draft=4" and rows[0].max_running_requests is not None
    assert len(during) == 1, during  # three polls, one SSH connection


async def test_a_cluster_is_one_row_beside_its_nodes(tmp_path: Path) -> None:
    from specdec_tui.hosts.local.demo_cluster import DEMO_CLUSTER, ensure_demo_cluster

    config = ensure_demo_cluster(tmp_path / "cluster", 2, time_scale=FAST)
    poller = FleetPoller(config)
    try:
        rows = {r.name: r for r in await poller.poll()}
    finally:
        await poller.close()
    assert DEMO_CLUSTER in rows and set(config.hosts) <= set(rows)
    row = rows[DEMO_CLUSTER]
    assert row.state == "down" and row.address.startswith("cluster: ")
    assert row.spec_text.startswith("NEXTN steps=1")


def test_fleet_status_knows_the_demo_like_every_other_verb(tmp_path: Path) -> None:
    """Issue 35 (11): `fleet status --host demo` was refused, and with no config it said there were no hosts,
    while `--host demo` works in every other headless verb and the panel's Fleet tab lists the demo."""
    env = {**os.environ, "COLUMNS": "160"}
    for extra in (["--host", "demo"], []):
        run = subprocess.run([sys.executable, "-m", "specdec_tui", "fleet", "status", "--json", *extra],
                             capture_output=True, text=True, timeout=60, env=env)
        assert run.returncode == 0, run.stderr
        rows = json.loads(run.stdout)
        assert [r["name"] for r in rows] == ["demo"] and rows[0]["state"] == "down"


def test_fleet_status_refuses_hosts_that_are_one_server_naming_them(tmp_path: Path) -> None:
    """Issue 35 (6): rehearsal hosts without their own workspace are the one demo unit; the fleet showed three
    servers where there is one (then polled it once under the first name). Now refused, like a sweep and a tune."""
    config = tmp_path / "config.toml"
    config.write_text("".join(f'[hosts.{n}]\naddress = "local"\n' for n in ("a", "b")))
    run = subprocess.run([sys.executable, "-m", "specdec_tui", "fleet", "status", "--config", str(config), "--json"],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "160"})
    assert run.returncode == 1 and run.stdout == "", run.stdout
    assert "fleet status refused: hosts a and b are one server" in run.stderr and "sglang-demo.service" in run.stderr
    assert "own `workspace`" in run.stderr and "Traceback" not in run.stderr
