"""SSHHost against a REAL OpenSSH sshd and a REAL systemd (booted in a private namespace by
tests/hostlab). Skips where the lab cannot run; fails instead under CI=true."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from specdec_tui.hosts.errors import HostKeyError, PrivilegeError, UnitRejected
from tests.hostlab.fixtures import TICKER_UNIT, UNIT, lab_in_home_ssh, while_unit_runs
from tests.hostlab.lab import NOPASSWD_USER, TEST_USER

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(120)]


async def test_unknown_host_key_is_refused_with_what_to_do(make_ssh_host, hostlab, lab_service):
    hostlab.known_hosts.write_text("")
    host = make_ssh_host(trust=False)
    with pytest.raises(HostKeyError) as err:
        await host.connect()
    text = str(err.value)
    assert "unknown" in text and f"ssh-keyscan -p {hostlab.ssh_port} 127.0.0.1" in text
    assert "accept_new_host_key" in text
    assert hostlab.known_hosts.read_text() == ""


async def test_accept_new_host_key_adds_it_and_connects(make_ssh_host, hostlab, lab_service):
    hostlab.known_hosts.write_text("")
    host = make_ssh_host(trust=False, accept_new_host_key=True)
    await host.connect()
    assert (await host.status()).is_running
    saved = hostlab.known_hosts.read_text().split()
    assert saved[:3] == hostlab.host_key_line().split()


async def test_changed_host_key_is_refused_even_with_accept_new(make_ssh_host, hostlab, lab_service):
    other_key = hostlab.client_key.with_suffix(".pub").read_text().split()  # a key that is not the host's
    hostlab.known_hosts.write_text(f"[127.0.0.1]:{hostlab.ssh_port} {other_key[0]} {other_key[1]}\n")
    before = hostlab.known_hosts.read_text()
    host = make_ssh_host(trust=False, accept_new_host_key=True)
    with pytest.raises(HostKeyError, match="CHANGED"):
        await host.connect()
    assert hostlab.known_hosts.read_text() == before


@pytest.mark.parametrize("bad_line", ["garbage", "@bogus-marker [127.0.0.1]:1 ssh-ed25519 AAAA"])
async def test_an_unparseable_known_hosts_is_reported_and_never_written(make_ssh_host, hostlab, lab_service, bad_line):
    """One line asyncssh cannot read must not make the file empty: the changed key above it stays CHANGED."""
    other_key = hostlab.client_key.with_suffix(".pub").read_text().split()  # a key that is not the host's
    hostlab.known_hosts.write_text(f"[127.0.0.1]:{hostlab.ssh_port} {other_key[0]} {other_key[1]}\n{bad_line}\n")
    before = hostlab.known_hosts.read_bytes()
    host = make_ssh_host(trust=False, accept_new_host_key=True)
    with pytest.raises(HostKeyError) as err:
        await host.connect()
    assert f"{hostlab.known_hosts}:2: this known_hosts line cannot be read" in str(err.value)
    assert hostlab.known_hosts.read_bytes() == before


async def test_a_host_line_whose_key_cannot_be_read_is_not_unknown(make_ssh_host, hostlab, lab_service):
    """asyncssh skips a key it cannot import; the host is still on file, so nothing is appended for it."""
    hostlab.known_hosts.write_text(f"[127.0.0.1]:{hostlab.ssh_port} ssh-ed25519 AAAAnotakey\n")
    before = hostlab.known_hosts.read_bytes()
    host = make_ssh_host(trust=False, accept_new_host_key=True)
    with pytest.raises(HostKeyError, match="CHANGED"):
        await host.connect()
    assert hostlab.known_hosts.read_bytes() == before


async def test_push_writes_exact_bytes_and_keeps_the_old_text(make_ssh_host, lab_service):
    host = make_ssh_host()
    old = await host.read_unit()
    assert old == lab_service.text
    new = lab_service.text_with(4) + "# tuned: 4 steps, trailing spaces kept   \n"
    result = await host.push(new)
    assert result.changed and result.backup == 1
    assert lab_service.read_on_host() == new.encode()
    assert lab_service.read_on_host(f"/etc/systemd/system/.specdec/{UNIT}.1") == old.encode()
    assert await host.history() == [1]
    assert (await host.push(new)).changed is False


async def test_verify_rejects_a_broken_unit_and_nothing_changes(make_ssh_host, lab_service):
    host = make_ssh_host()
    broken = lab_service.text.replace("ExecStart=", "ExecStart=/nonexistent/bin/sglang-missing ")
    with pytest.raises(UnitRejected, match="nothing was changed"):
        await host.push(broken)
    assert lab_service.read_on_host() == lab_service.text.encode()
    assert await host.history() == []


async def test_restart_runs_the_new_flags_and_rollback_brings_the_old_back(make_ssh_host, lab_service):
    host = make_ssh_host()
    assert lab_service.server_info()["speculative_num_steps"] == 3
    await host.push(lab_service.text_with(4))
    restarted = await host.restart()
    assert restarted.ok and restarted.status.is_running and restarted.status.main_pid
    assert lab_service.server_info()["speculative_num_steps"] == 4

    restored = await host.rollback()
    assert restored == lab_service.text
    assert lab_service.read_on_host() == lab_service.text.encode()
    assert await host.history() == []
    assert (await host.restart()).ok
    assert lab_service.server_info()["speculative_num_steps"] == 3


async def test_repeated_rollbacks_go_further_back(make_ssh_host, lab_service):
    host = make_ssh_host()
    texts = [lab_service.text, lab_service.text_with(4), lab_service.text_with(5)]
    for text in texts[1:]:
        await host.push(text)
    assert await host.history() == [1, 2]
    assert await host.rollback() == texts[1]
    assert await host.rollback() == texts[0]
    assert lab_service.read_on_host() == texts[0].encode()



async def test_dropping_a_task_s_backups_leaves_the_others_and_the_unit(make_ssh_host, lab_service):
    """What a sweep or tune does once it has put the unit back (`loop.task_backups`): its backups go, the
    operator's stay, and a rollback then targets the operator's."""
    host = make_ssh_host()
    texts = [lab_service.text, lab_service.text_with(4), lab_service.text_with(5), lab_service.text_with(4)]
    for text in texts[1:]:
        await host.push(text)
    assert await host.history() == [1, 2, 3]
    await host.drop_backups([2, 3])
    assert await host.history() == [1]
    assert lab_service.read_on_host() == texts[3].encode()
    assert await host.rollback() == texts[0]

async def test_journal_shows_the_new_process_starting(make_ssh_host, lab_service):
    host = make_ssh_host()
    await host.push(lab_service.text_with(4))
    restarted = await host.restart()
    assert restarted.ok and restarted.status.main_pid, restarted
    new_pid = restarted.status.main_pid
    seen = []
    stream = host.journal(lines=200, follow=True)
    async for record in while_unit_runs(stream, lab_service.lab, lab_service.unit):
        if record.pid == new_pid:
            seen.append(record.message)
        if any("'speculative_num_steps': 4" in m for m in seen):  # 0.5.23's server_args={...} (a dict)
            break
    await stream.aclose()
    assert seen, "no journal line from the restarted process"


def tick_numbers(records, pid):
    return [int(r.message.split()[1]) for r in records if r.pid == pid and r.message.startswith("tick ")]


async def test_journal_resumes_after_a_dropped_connection_without_loss(make_ssh_host, hostlab, ticker_service):
    host = make_ssh_host(unit=TICKER_UNIT)
    pid = (await host.status()).main_pid
    records = []
    stream = host.journal(lines=5, follow=True)
    killed = False
    async for record in while_unit_runs(stream, hostlab, TICKER_UNIT):
        records.append(record)
        ticks = tick_numbers(records, pid)
        if not killed and len(ticks) >= 5:
            sessions = hostlab.session_pids()
            assert sessions, "no sshd session process found"
            for session_pid in sessions:  # the sshd child serving our connection, by PID
                os.kill(session_pid, signal.SIGKILL)
            killed = True
        if killed and any(r.kind == "gap" for r in records) and len(ticks) >= 40:
            break
    await stream.aclose()
    ticks = tick_numbers(records, pid)
    assert [r.kind for r in records].count("gap") == 1
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks))), "lines lost or repeated across the reconnect"
    cursors = [r.cursor for r in records if r.kind == "line"]
    assert len(cursors) == len(set(cursors))


async def test_closing_the_journal_leaves_no_remote_journalctl(make_ssh_host, hostlab, ticker_service):
    host = make_ssh_host(unit=TICKER_UNIT)
    stream = host.journal(lines=1, follow=True)
    await stream.__anext__()
    await stream.aclose()

    def journalctl_running() -> bool:
        out = hostlab.run(["sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null"], check=False).stdout.split()
        return "journalctl" in out

    for _ in range(100):
        if not journalctl_running():
            break
        await asyncio.sleep(0.05)
    assert not journalctl_running()


async def test_status_reports_systemd_state(make_ssh_host, lab_service):
    host = make_ssh_host()
    status = await host.status()
    assert status.active_state == "active" and status.sub_state == "running"
    assert status.main_pid and status.active_enter is not None
    await host.stop()
    stopped = await host.status()
    assert stopped.active_state == "inactive" and stopped.main_pid is None


async def test_gpu_facts_empty_without_nvidia_smi(make_ssh_host, lab_service):
    assert await make_ssh_host().gpu_facts() == []


def test_unit_name_with_shell_metacharacters_is_refused_before_connecting(make_ssh_host, hostlab):
    before = hostlab.session_pids()
    with pytest.raises(UnitRejected, match="not a valid systemd unit name"):
        make_ssh_host(unit="x;touch /tmp/pwned.service")
    # no new connection; one an earlier test was still closing may have ended meanwhile (CI: [] == [23556])
    assert set(hostlab.session_pids()) <= set(before)
    assert hostlab.run(["test", "-e", "/tmp/pwned.service"], check=False).returncode != 0


async def test_sudo_user_without_nopasswd_gets_privilege_error(make_ssh_host, hostlab, lab_service):
    if hostlab.run(["sh", "-c", "command -v sudo"], check=False).returncode != 0:
        pytest.skip("sudo is not installed on this machine (listed in .ci/apt-packages.txt)")
    host = make_ssh_host(user=TEST_USER, sudo=True)
    with pytest.raises(PrivilegeError, match="needs a password"):
        await host.connect()


async def test_passwordless_sudo_user_can_push_restart_and_roll_back(make_ssh_host, hostlab, lab_service):
    if hostlab.run(["sh", "-c", "command -v sudo"], check=False).returncode != 0:
        pytest.skip("sudo is not installed on this machine (listed in .ci/apt-packages.txt)")
    host = make_ssh_host(user=NOPASSWD_USER, sudo=True)
    new = lab_service.text_with(4)
    assert (await host.push(new)).backup == 1
    assert lab_service.read_on_host() == new.encode()
    assert (await host.restart()).ok
    assert lab_service.server_info()["speculative_num_steps"] == 4
    assert await host.rollback() == lab_service.text


def test_cli_host_status_and_cat_over_ssh(hostlab, lab_service, monkeypatch, tmp_path, capsys):
    """`specdec-tui host …` through the factory with OpenSSH defaults (~/.ssh/config, known_hosts)."""
    from specdec_tui.cli.main import main

    lab_in_home_ssh(hostlab, tmp_path, monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.lab]\naddress = "hostlab"\nunit = "{UNIT}"\n')
    assert main(["host", "cat", "--host", "lab", "--config", str(config)]) == 0
    assert capsys.readouterr().out == lab_service.text
    assert main(["host", "status", "--host", "lab", "--config", str(config)]) == 0
    assert f"{UNIT}: active (running)" in capsys.readouterr().out


def test_cli_host_rollback_over_ssh_restarts_and_waits_healthy(hostlab, lab_service, monkeypatch, tmp_path, capsys):
    """`host rollback` on a real systemd host means what `u` means in the panel: restore, daemon-reload,
    restart, wait until healthy — the server then runs the restored flags."""
    from specdec_tui.cli.main import main

    lab_in_home_ssh(hostlab, tmp_path, monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.lab]\naddress = "hostlab"\nunit = "{UNIT}"\nbase_url = "{lab_service.base_url}"\n'
                      "healthy_timeout_s = 60\n")
    edited = tmp_path / "steps4.service"
    edited.write_text(lab_service.text_with(4))
    where = ["--host", "lab", "--config", str(config)]
    assert main(["host", "push", str(edited), *where]) == 0
    assert main(["host", "restart", *where]) == 0
    assert lab_service.server_info()["speculative_num_steps"] == 4
    capsys.readouterr()

    assert main(["host", "rollback", *where]) == 0
    out = capsys.readouterr().out
    assert "--speculative-num-steps 4 → 3" in out and "healthy again" in out
    assert lab_service.read_on_host() == lab_service.text.encode()
    assert lab_service.server_info()["speculative_num_steps"] == 3


def test_cli_a_unit_that_is_not_utf8_and_a_latin1_file_to_push_are_words(hostlab, lab_service, monkeypatch, tmp_path,
                                                                            capsys):
    """A Latin-1 byte in the unit on the host (`host cat`, `fleet status`) or in the file to push: one line that says
    which file and which byte, a non-zero exit, no traceback; the unit on the host is left as it was."""
    from specdec_tui.cli.main import main

    lab_in_home_ssh(hostlab, tmp_path, monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.lab]\naddress = "hostlab"\nunit = "{UNIT}"\nbase_url = "{lab_service.base_url}"\n')
    where = ["--host", "lab", "--config", str(config)]

    latin1 = tmp_path / "latin1.service"
    latin1.write_bytes(lab_service.text.encode() + b"# caf\xe9\n")
    assert main(["host", "push", str(latin1), *where]) == 1
    err = capsys.readouterr().err
    assert f"{latin1}: not UTF-8 text" in err and "Traceback" not in err
    assert lab_service.read_on_host() == lab_service.text.encode()

    hostlab.run(["sh", "-c", f"printf '# caf\\351\\n' >> {lab_service.path}"])
    lines = lab_service.text.count("\n") + 1
    assert main(["host", "cat", *where]) == 1
    err = capsys.readouterr().err
    assert f"is not UTF-8 text: byte 0xe9 on line {lines}" in err, err
    assert main(["fleet", "status", "--config", str(config), "--json"]) == 3
    out = capsys.readouterr().out
    assert f"is not UTF-8 text: byte 0xe9 on line {lines}" in out, out


def test_cli_host_journal_prints_a_hostile_line_as_words(hostlab, monkeypatch, tmp_path, capfdbinary):
    """A service that prints escape codes, C1 controls, BEL, BS, SO/SI (journald keeps such a line as bytes):
    `host journal` prints its words and no control byte (issue 36, Security 3)."""
    from specdec_tui.cli.main import main

    unit = "specdec-hostile.service"
    hostlab.run(["tee", f"/etc/systemd/system/{unit}"], input=(
        "[Unit]\nDescription=prints hostile bytes\n[Service]\nType=oneshot\n"
        "ExecStart=/usr/bin/printf 'said \\\\033]0;PWNED\\\\007 \\\\302\\\\2332J bell\\\\007 bs\\\\010 so\\\\016 si\\\\017 done\\\\n'\n"))
    hostlab.run(["systemctl", "daemon-reload"])
    hostlab.run(["systemctl", "start", unit])
    lab_in_home_ssh(hostlab, tmp_path, monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text(f'[hosts.lab]\naddress = "hostlab"\nunit = "{unit}"\n')
    assert main(["host", "journal", "--host", "lab", "--config", str(config), "--lines", "20"]) == 0
    out = capfdbinary.readouterr().out
    assert b"said" in out and b"done" in out, out
    line = next(line for line in out.splitlines() if b"said" in line)
    assert not any(b < 0x20 and b != 0x09 for b in line), line
    assert b"\xc2\x9b" not in line and b"\x7f" not in line, line
    hostlab.run(["rm", "-f", f"/etc/systemd/system/{unit}"])
    hostlab.run(["systemctl", "daemon-reload"])
