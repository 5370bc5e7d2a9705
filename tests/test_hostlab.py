"""The test host itself works wherever the checkout is (issue 12, "the test suite runs anywhere").

The lab mounts a private tmpfs over /tmp (and /home is its own), so a unit whose python lives in a clone
under /tmp could not start there. The lab bind-mounts such directories back, read-only, at the same
path; a directory it cannot handle is refused in words at boot; and a unit that cannot start fails the
test at once with systemd's state and the unit's journal, not after the test's time limit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts.ssh.host import SSHHost
from tests.hostlab.fixtures import (
    TICKER_UNIT,
    install_service,
    lab_unavailable,
    unit_problem,
    wait_until_serving,
    while_unit_runs,
)
from tests.hostlab.lab import HostLab, LabUnavailable, free_port, missing_requirements, paths_a_unit_needs

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(120)]

ARGV_SERVER = Path(__file__).resolve().parent / "hostlab" / "argv_server.py"
UNIT = "specdec-tmp-python.service"


def make_venv(parent: Path) -> Path:
    """A venv of this python (no pip) with the lab's small server copied next to it: all under `parent`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(parent / "venv")], check=True)
    shutil.copy2(ARGV_SERVER, parent / "server.py")
    return parent / "venv" / "bin" / "python"


@pytest.fixture(scope="module")
def tmp_python_lab() -> Iterator[tuple[HostLab, Path, Path]]:
    """A lab told to show one directory under the machine's /tmp (holding a venv), and a second venv
    under /tmp that it is NOT told about."""
    reason = missing_requirements()
    if reason:
        lab_unavailable(reason)
    shown = Path(tempfile.mkdtemp(prefix="specdec-lab-shown-", dir="/tmp"))
    hidden = Path(tempfile.mkdtemp(prefix="specdec-lab-hidden-", dir="/tmp"))
    make_venv(shown)
    make_venv(hidden)
    lab = HostLab(root_dir=Path(f"/var/lib/specdec-hostlab-{os.getpid()}-tmppython"),
                  visible=[*paths_a_unit_needs(), shown])
    try:
        try:
            lab.boot()
        except LabUnavailable as err:
            lab_unavailable(str(err))
        yield lab, shown, hidden
    finally:
        lab.shutdown()
        shutil.rmtree(shown, ignore_errors=True)
        shutil.rmtree(hidden, ignore_errors=True)


def unit_for(python_dir: Path, port: int) -> str:
    return (f"[Unit]\nDescription=python under /tmp\n\n[Service]\n"
            f"ExecStart={python_dir}/venv/bin/python -u {python_dir}/server.py --port {port} "
            "--speculative-num-steps 7\nRestart=no\n")


async def test_a_unit_whose_python_lives_under_tmp_runs_in_the_lab(tmp_python_lab):
    lab, shown, _hidden = tmp_python_lab
    port = free_port()
    install_service(lab, UNIT, unit_for(shown, port), port)  # fails at once, with the journal, if it cannot start

    # What the panel's user sees over SSH: the unit running, and its own first lines in the journal.
    lab.known_hosts.write_text(lab.host_key_line())
    host = SSHHost(HostConfig(name="lab", address="hostlab", unit=UNIT, user="root"),
                   known_hosts=lab.known_hosts, ssh_config=lab.ssh_config, client_keys=[lab.client_key],
                   agent_path=None)
    try:
        status = await host.status()
        assert status.is_running and status.main_pid
        exe = lab.run(["readlink", f"/proc/{status.main_pid}/exe"]).stdout.strip()
        assert exe == os.path.realpath(shown / "venv" / "bin" / "python")  # the venv's python, resolved
        cmdline = lab.run(["cat", f"/proc/{status.main_pid}/cmdline"]).stdout.split("\0")
        assert cmdline[0] == f"{shown}/venv/bin/python"
        messages = []
        async for record in host.journal(lines=50, follow=False):
            messages.append(record.message)
        assert "speculative_num_steps=7" in messages, messages
    finally:
        await host.close()

    # The machine's directory is shown read-only: nothing in the lab can write to (or empty) it ...
    assert lab.run(["touch", f"{shown}/written-in-the-lab"], check=False).returncode != 0
    assert not (shown / "written-in-the-lab").exists() and (shown / "server.py").exists()
    # ... and the lab's /tmp is still its own private tmpfs, not the machine's.
    assert lab.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "--mountpoint", "/tmp"]).stdout.split() == [
        "tmpfs", "hostlab"]
    lab.run(["touch", "/tmp/specdec-lab-private-marker"])
    assert not Path("/tmp/specdec-lab-private-marker").exists()


@pytest.mark.timeout(30)  # the fixture's wait would be 60 s: only failing at once can pass
def test_a_unit_that_cannot_start_fails_at_once_with_its_state_and_journal(tmp_python_lab):
    lab, _shown, hidden = tmp_python_lab  # the lab was not told about `hidden`: its python is not there
    port = free_port()
    with pytest.raises(pytest.fail.Exception) as err:
        install_service(lab, UNIT, unit_for(hidden, port), port)
        wait_until_serving(lab, UNIT, port, timeout=60)
    text = str(err.value)
    assert f"{UNIT} is not running" in text and "ActiveState=failed" in text, text
    assert f"{hidden}/venv/bin/python" in text and "status=203/EXEC" in text, text  # systemd names the step
    assert unit_problem(lab, UNIT) is not None


def test_a_directory_the_lab_cannot_show_is_refused_in_words_at_boot():
    reason = missing_requirements()
    if reason:
        lab_unavailable(reason)
    lab = HostLab(root_dir=Path(f"/var/lib/specdec-hostlab-{os.getpid()}-refused"), visible=[Path("/tmp")])
    try:
        with pytest.raises(LabUnavailable) as err:
            lab.boot(timeout=20)
    finally:
        lab.shutdown()
    assert "need /tmp, but /tmp itself is one of the lab's private directories" in str(err.value)
    assert "Refusing to boot" in str(err.value)


@pytest.mark.timeout(30)  # without the watch, the follow below would wait for a line forever
async def test_a_journal_follow_on_a_unit_that_died_fails_at_once_in_words(make_ssh_host, hostlab, ticker_service):
    host = make_ssh_host(unit=TICKER_UNIT)
    stream = host.journal(lines=1, follow=True)
    with pytest.raises(pytest.fail.Exception) as err:
        async for record in while_unit_runs(stream, hostlab, TICKER_UNIT):
            if record.message.startswith("tick "):
                hostlab.run(["systemctl", "kill", "--signal=KILL", TICKER_UNIT])
    await stream.aclose()
    text = str(err.value)
    assert f"{TICKER_UNIT} is not running" in text and "ActiveState=failed" in text, text
    assert "Result=signal" in text and "signal=KILL" in text, text  # systemctl status names how it ended
