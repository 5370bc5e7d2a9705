"""One owner for the connections of a sweep's or a tune's hosts (`loop.host_group`), against real hosts: local demo
hosts with their simulated server, asyncssh's SSH server on loopback, a loopback port nothing listens on and a
peer that accepts and never speaks. Then `specdec-tui sweep` and `tune` as a user runs them: the host whose
connect failed named in words, a Ctrl-C mid-connect an interruption, not a traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import DemoWorkspace, ensure_demo_workspace
from specdec_tui.loop.host_group import ConnectFailed, HostGroup
from tests.loopback_ssh import LoopbackSSH, SilentPeer, closed_port

SMALL = ["--concurrency", "1", "--requests", "2", "--max-tokens", "16", "--repeats", "1"]
TUNE = ["--space", "speculative-num-steps=1,2", "--slo", "ttft_p99=2s", "--concurrency", "1", "--budget", "2"]


@pytest.fixture
async def sshd(tmp_path: Path) -> AsyncIterator[LoopbackSSH]:
    server = await LoopbackSSH(tmp_path / "sshd").start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def silent() -> AsyncIterator[SilentPeer]:
    peer = await SilentPeer().start()
    try:
        yield peer
    finally:
        await peer.stop()


def demo_host(tmp_path: Path, name: str) -> tuple[LocalHost, DemoWorkspace]:
    ws = ensure_demo_workspace(tmp_path / name, time_scale=25)
    return LocalHost(ws.root, ws.unit_name, ws.base_url, name=name), ws


async def test_every_host_is_connected_in_turn_and_closed_at_the_end_even_when_the_run_fails(
        tmp_path: Path, sshd: LoopbackSSH) -> None:
    local, ws = demo_host(tmp_path, "a")
    hosts: list[tuple[str, Host]] = [("a", local), ("b", sshd.host("b")), ("c", sshd.host("c"))]
    with pytest.raises(RuntimeError, match="the run broke"):
        async with HostGroup(hosts):
            assert sshd.open == 2  # both SSH hosts logged in
            await local.restart()  # a service this (closing) local host started: its close stops it
            assert (await local.status()).active_state == "active"
            raise RuntimeError("the run broke")
    await sshd.wait_open(0)
    assert (await LocalHost(ws.root, ws.unit_name, ws.base_url).status()).active_state == "inactive"


async def test_a_close_that_fails_is_let_go_and_the_other_hosts_are_still_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """a's stop cannot take its control lock (another process holds it: here, this test on its own descriptor),
    so its close raises a HostError; b is still closed and the group raises nothing. (The CLI closed its hosts
    one by one in a `finally`: the first close that failed left the next hosts open and replaced the run's own
    ending with its error.)"""
    import fcntl

    from specdec_tui.hosts.local import host as local_host

    (a, ws_a), (b, ws_b) = demo_host(tmp_path, "a"), demo_host(tmp_path, "b")
    monkeypatch.setattr(local_host, "CONTROL_LOCK_TIMEOUT_S", 0.5)  # the wait for the lock: not two minutes
    lock = -1
    try:
        async with HostGroup([("a", a), ("b", b)]):
            await asyncio.gather(a.restart(), b.restart())
            lock = os.open(a.state_file.with_name(f"{a.unit_name}.lock"), os.O_RDWR)
            fcntl.flock(lock, fcntl.LOCK_EX)
            with pytest.raises(HostError, match="another process has been restarting or stopping"):
                await a.stop()  # what a's close will meet
        assert (await LocalHost(ws_b.root, ws_b.unit_name, ws_b.base_url).status()).active_state == "inactive"
        assert (await LocalHost(ws_a.root, ws_a.unit_name, ws_a.base_url).status()).active_state == "active"
    finally:
        if lock >= 0:
            os.close(lock)
        await a.stop()


async def test_a_host_that_cannot_be_reached_is_named_and_the_hosts_opened_before_it_are_closed(
        sshd: LoopbackSSH) -> None:
    group = HostGroup([("a", sshd.host("a")), ("b", sshd.host("b", port=closed_port())), ("c", sshd.host("c"))])
    with pytest.raises(ConnectFailed) as failed:
        await group.connect()
    assert failed.value.host == "b"
    assert str(failed.value).startswith("cannot reach 127.0.0.1 over SSH") and "check the address" in str(failed.value)
    await sshd.wait_open(0)  # a's connection closed; c never tried
    await group.close()  # closing again closes nothing twice and raises nothing


async def cancel_connect(group: HostGroup, waiting: asyncio.Event, sshd: LoopbackSSH) -> None:
    """Start `group.connect()`, cancel it once `waiting` is set (a host logged in at `sshd`, another not done),
    and see the cancel go on (not turned into a host failure) and `sshd` left with no connection."""
    connecting = asyncio.ensure_future(group.connect())
    await asyncio.wait_for(waiting.wait(), 10)
    assert sshd.open == 1
    connecting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await connecting
    await sshd.wait_open(0)


async def test_a_connect_cancelled_half_way_closes_the_hosts_already_open(sshd: LoopbackSSH,
                                                                           silent: SilentPeer) -> None:
    """A Ctrl-C while the second host has not answered: the first host's connection is closed, the half-open
    one too, and the cancel goes on (it is not turned into a host failure)."""
    group = HostGroup([("a", sshd.host("a")), ("hung", sshd.host("hung", port=silent.port, connect_timeout_s=60))])
    await cancel_connect(group, silent.accepted, sshd)
    await asyncio.wait_for(silent.ended.wait(), 10)


async def test_a_connect_cancelled_after_login_leaves_no_connection_open(tmp_path: Path) -> None:
    """Cancelled while the host's post-login probe (`id -u`) has not answered: the login is closed too (it was
    not yet the host's connection, so the host's close could not reach it; before, it stayed open)."""
    sshd = await LoopbackSSH(tmp_path / "sshd", answer=False).start()
    try:
        await cancel_connect(HostGroup([("a", sshd.host("a"))]), sshd.asked, sshd)
    finally:
        await sshd.stop()


# ---------------------------------------------------------------------------------------------- the CLI verbs


def write_config(tmp_path: Path, ssh_port: int, connect_timeout_s: float = 10) -> Path:
    ws = ensure_demo_workspace(tmp_path / "a", time_scale=25)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.a]\naddress = "local"\nworkspace = "{ws.root}"\n'
                      f'[hosts.b]\naddress = "127.0.0.1"\nport = {ssh_port}\nconnect_timeout_s = {connect_timeout_s}\n')
    return config


@pytest.mark.parametrize("verb", [["sweep", "--values", "1..2", *SMALL], ["tune", *TUNE]], ids=["sweep", "tune"])
def test_the_cli_names_the_host_it_could_not_reach_and_touches_no_unit(
        verb: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh of the machine's
    config = write_config(tmp_path, closed_port())
    unit = (tmp_path / "a").glob("**/*.service")
    before = {p: p.read_bytes() for p in unit}
    code = main([verb[0], "--host", "a", "--host", "b", "--config", str(config), *verb[1:],
                 "--session", str(tmp_path / "s.toml")])
    err = capsys.readouterr().err
    assert code == 1
    assert "specdec-tui: b: cannot reach 127.0.0.1 over SSH" in err and "check the address, port and network" in err
    assert "Traceback" not in err
    assert before and {p: p.read_bytes() for p in before} == before


@pytest.mark.parametrize("verb", [["sweep", "--values", "1..2", *SMALL], ["tune", *TUNE]], ids=["sweep", "tune"])
async def test_a_ctrl_c_while_a_host_has_not_answered_ends_the_cli_in_words(verb: list[str], tmp_path: Path,
                                                                           silent: SilentPeer) -> None:
    config = write_config(tmp_path, silent.port, connect_timeout_s=60)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "specdec_tui.cli.main", verb[0], "--host", "a", "--host", "b", "--config", str(config),
        *verb[1:], "--session", str(tmp_path / "s.toml"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp_path)})
    try:
        await asyncio.wait_for(silent.accepted.wait(), 60)
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 128 + signal.SIGINT, err.decode()
    assert "specdec-tui: interrupted (SIGINT)" in err.decode() and b"Traceback" not in err
    await asyncio.wait_for(silent.ended.wait(), 10)
