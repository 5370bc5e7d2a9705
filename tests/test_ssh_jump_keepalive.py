"""SSH as fleets use it, against the lab's real sshd and systemd: a jump host (ProxyJump) from the host table,
and a link that dies without a FIN (the peer frozen) noticed by keepalives within 15 s — the journal reconnects
and marks the gap, a push fails in words instead of hanging."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.ssh.host import SSHHost
from specdec_tui.hosts.ssh.jump import resolve_jump
from tests.hostlab.fixtures import UNIT
from tests.hostlab.lab import INNER_NAME, HostLab

NOTICE_WITHIN_S = 15.0


def test_jump_spellings_resolve_to_the_bastion() -> None:
    target = HostConfig(name="gpu", address="10.0.0.9", user="ops", identity_file="~/.ssh/k", jump="admin@bastion:2222")
    via = resolve_jump(target, {})
    assert via is not None and (via.address, via.port, via.user, via.identity_file) == ("bastion", 2222, "admin", "~/.ssh/k")
    named = HostConfig(name="bastion", address="b.example.invalid", port=22, user="jumper")
    assert resolve_jump(HostConfig(name="gpu", jump="bastion"), {"bastion": named}) is named
    assert resolve_jump(HostConfig(name="gpu"), {}) is None
    with pytest.raises(HostError, match="not a TCP port"):
        resolve_jump(HostConfig(name="gpu", jump="bastion:ssh"), {})
    with pytest.raises(HostError, match="names itself"):
        resolve_jump(HostConfig(name="gpu", jump="gpu"), {})
    with pytest.raises(HostError, match="has a jump host of its own"):
        resolve_jump(HostConfig(name="gpu", jump="b"), {"b": HostConfig(name="b", address="x", jump="c")})


def _lab_host(lab: HostLab, *, jump: str | None, address: str = INNER_NAME) -> SSHHost:
    pub = lab.host_key.with_suffix(".pub").read_text().split()
    lab.known_hosts.write_text(lab.host_key_line() + f"[{INNER_NAME}]:{lab.ssh_port} {pub[0]} {pub[1]}\n")
    target = HostConfig(name="inner", address=address, port=lab.ssh_port, user="root", unit=UNIT, jump=jump,
                        connect_timeout_s=5.0)
    return SSHHost(target, jump=resolve_jump(target, {}), known_hosts=lab.known_hosts, ssh_config=lab.ssh_config,
                   client_keys=[lab.client_key], agent_path=None)


async def test_a_name_only_the_bastion_resolves_is_reached_through_the_jump(hostlab: HostLab, lab_service) -> None:
    direct = _lab_host(hostlab, jump=None)
    with pytest.raises(HostError, match=f"cannot reach {INNER_NAME} over SSH"):
        await direct.connect()
    jumped = _lab_host(hostlab, jump="hostlab")  # the lab's ~/.ssh/config alias: 127.0.0.1, its port, root
    try:
        assert "--speculative-num-steps 3" in await jumped.read_unit()
        assert (await jumped.status()).active_state == "active"
        assert jumped.connector.jump_conn is not None and not jumped.connector.jump_conn.is_closed()
    finally:
        await jumped.close()
    assert jumped.connector.jump_conn is None


async def test_an_unreachable_jump_host_is_named_in_the_error(hostlab: HostLab) -> None:
    host = _lab_host(hostlab, jump="root@127.0.0.1:1")  # nothing listens on port 1
    with pytest.raises(HostError, match=r"jump host 127\.0\.0\.1 \(for specdec-lab-inner\): cannot reach 127\.0\.0\.1"):
        await host.connect()


def _sshd_pids_serving(lab_port: int, client_port: int) -> list[int]:
    """The lab's per-connection sshd processes holding our TCP connection (found by the socket, not by name)."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"( sport = :{lab_port} and dport = :{client_port} )"],
                         capture_output=True, text=True, check=True).stdout
    return sorted({int(pid) for pid in re.findall(r"pid=(\d+)", out)})


@contextmanager
def frozen(pids: list[int], *, lab_listener: HostLab | None = None) -> Iterator[None]:
    """SIGSTOP: the kernel still ACKs TCP, but sshd answers nothing and sends no FIN — a silent drop. The
    connection's own sshd processes are killed afterwards; the lab's listener (if frozen too) is let go on."""
    assert pids, "found no sshd process serving the connection"
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    if lab_listener is not None:
        lab_listener.freeze_sshd()
    try:
        yield
    finally:
        if lab_listener is not None:
            lab_listener.thaw_sshd()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


async def _freeze_current_connection(host: SSHHost, lab: HostLab, *, and_the_listener: bool = False):
    conn = await host._connection()
    client_port = conn.get_extra_info("sockname")[1]
    return frozen(_sshd_pids_serving(lab.ssh_port, client_port), lab_listener=lab if and_the_listener else None)


async def test_a_silently_dropped_link_is_noticed_and_the_journal_resumes_with_a_gap(
    hostlab: HostLab, ticker_service, make_ssh_host
) -> None:
    host = make_ssh_host(ticker_service.unit)
    follow = host.journal(lines=5, follow=True).__aiter__()
    first = await asyncio.wait_for(follow.__anext__(), 20)
    assert first.kind != "gap"
    with await _freeze_current_connection(host, hostlab):
        frozen_at = time.monotonic()
        while True:
            record = await asyncio.wait_for(follow.__anext__(), NOTICE_WITHIN_S + 10)
            if record.kind == "gap":
                noticed_after = time.monotonic() - frozen_at
                break
    assert noticed_after < NOTICE_WITHIN_S + 2, noticed_after  # keepalives (12 s) plus the first reconnect delay
    assert "lost" in record.message and "resuming after the last line" in record.message
    after_gap = await asyncio.wait_for(follow.__anext__(), 20)
    assert after_gap.kind != "gap" and "tick" in after_gap.message
    await follow.aclose()


async def test_a_push_over_a_silently_dropped_link_reconnects_and_completes(hostlab: HostLab, lab_service, make_ssh_host) -> None:
    """Keepalives close the dead link; the command never started on it, so it runs on a fresh connection."""
    host = make_ssh_host()
    with await _freeze_current_connection(host, hostlab):
        started = time.monotonic()
        result = await asyncio.wait_for(host.push(lab_service.text_with(4)), NOTICE_WITHIN_S + 10)
        took = time.monotonic() - started
    assert took < NOTICE_WITHIN_S, took
    assert result.changed and lab_service.read_on_host() == lab_service.text_with(4).encode()


async def test_a_push_when_the_host_stays_silent_fails_in_words_instead_of_hanging(
    hostlab: HostLab, lab_service, make_ssh_host
) -> None:
    host = make_ssh_host(connect_timeout_s=2.0)
    before = lab_service.read_on_host()
    with await _freeze_current_connection(host, hostlab, and_the_listener=True):
        started = time.monotonic()
        with pytest.raises(HostError) as err:
            await asyncio.wait_for(host.push(lab_service.text_with(4)), NOTICE_WITHIN_S + 10)
        took = time.monotonic() - started
    assert took < NOTICE_WITHIN_S + 2.0, took  # keepalives, then one reconnect that times out
    assert "hostlab" in str(err.value) and ("dropped" in str(err.value) or "cannot reach" in str(err.value))
    assert err.value.hint  # what to do about it
    assert lab_service.read_on_host() == before  # nothing was half-written


async def test_proxyjump_from_the_ssh_config_is_followed(hostlab: HostLab, lab_service, tmp_path) -> None:
    """No `jump` key: the ~/.ssh/config alias's own ProxyJump takes the connection through the bastion."""
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host inner\n  HostName {INNER_NAME}\n  Port {hostlab.ssh_port}\n  User root\n  ProxyJump bastion\n"
        f"  IdentityFile {hostlab.client_key}\n"
        f"Host bastion\n  HostName 127.0.0.1\n  Port {hostlab.ssh_port}\n  User root\n"
        f"  IdentityFile {hostlab.client_key}\n  UserKnownHostsFile {hostlab.known_hosts}\n"
    )
    pub = hostlab.host_key.with_suffix(".pub").read_text().split()
    hostlab.known_hosts.write_text(hostlab.host_key_line() + f"[{INNER_NAME}]:{hostlab.ssh_port} {pub[0]} {pub[1]}\n")
    host = SSHHost(HostConfig(name="inner", address="inner", unit=UNIT), known_hosts=hostlab.known_hosts,
                   ssh_config=config, client_keys=[hostlab.client_key], agent_path=None)
    try:
        assert "--speculative-num-steps 3" in await host.read_unit()
    finally:
        await host.close()


async def test_proxyjump_through_one_lab_host_to_another(hostlab: HostLab, hostlab2: HostLab) -> None:
    """The target is the second lab host under a name only the first one resolves: reached only through it."""
    pub2 = hostlab2.host_key.with_suffix(".pub").read_text().split()
    known = hostlab.known_hosts.parent / "known_hosts_two_labs"
    known.write_text(hostlab.host_key_line() + f"[{INNER_NAME}]:{hostlab2.ssh_port} {pub2[0]} {pub2[1]}\n")
    target = HostConfig(name="second", address=INNER_NAME, port=hostlab2.ssh_port, user="root", unit="sshd.service",
                        jump="hostlab", connect_timeout_s=5.0)
    host = SSHHost(target, jump=resolve_jump(target, {}), known_hosts=known, ssh_config=hostlab.ssh_config,
                   client_keys=[hostlab.client_key, hostlab2.client_key], agent_path=None)
    try:
        conn = await host._connection()
        served_by = (await conn.run("cat /proc/1/cgroup; echo; hostname", check=False)).stdout
        machine_id_2 = hostlab2.run(["cat", "/proc/1/cgroup"]).stdout
        assert machine_id_2.strip() != hostlab.run(["cat", "/proc/1/cgroup"]).stdout.strip()  # the labs tell apart
        assert machine_id_2.strip() in str(served_by)  # the second lab's PID 1 answered, through the first
    finally:
        await host.close()
