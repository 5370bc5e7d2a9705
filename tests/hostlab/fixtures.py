"""pytest plugin with the test-host fixtures: `hostlab` (one systemd+sshd boot per session),
`lab_service` (a fresh real unit per test) and `make_ssh_host` (an SSHHost pointed at the lab).

Enable with `pytest_plugins = ["tests.hostlab.fixtures"]` in tests/conftest.py (or import these names).
On a machine that cannot run the lab these fixtures SKIP with the reason — except under CI=true,
where a missing lab is a FAILURE, so CI can never pass by skipping.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts.ssh.host import SSHHost
from tests.hostlab.lab import (
    HostLab,
    LabUnavailable,
    free_port,
    missing_requirements,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")
ARGV_SERVER = Path(__file__).resolve().parent / "argv_server.py"
SIM_MAIN = REPO / "src" / "specdec_tui" / "sim" / "__main__.py"
UNIT = "specdec-lab.service"
TICKER_UNIT = "specdec-ticker.service"


def lab_unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"hostlab required under CI=true but unavailable: {reason}")
    pytest.skip(f"hostlab unavailable: {reason}")


def _booted(lab: HostLab) -> Iterator[HostLab]:
    reason = missing_requirements()
    if reason:
        lab_unavailable(reason)
    try:
        lab.boot()
    except LabUnavailable as err:
        lab.shutdown()
        lab_unavailable(str(err))
    try:
        yield lab
    finally:
        lab.shutdown()


@pytest.fixture(scope="session")
def hostlab() -> Iterator[HostLab]:
    yield from _booted(HostLab())


@pytest.fixture(scope="session")
def hostlab2() -> Iterator[HostLab]:
    """A second lab host (its own systemd, sshd and files) for clusters; it shares the machine's loopback
    with the first, as the nodes of a cluster share a network."""
    yield from _booted(HostLab(root_dir=Path(f"/var/lib/specdec-hostlab-{os.getpid()}-2")))


def server_exec(port: int, steps: int) -> str:
    """ExecStart= for the service under test: the simulated SGLang server when it exists."""
    if SIM_MAIN.exists():
        return (
            f"{sys.executable} -m specdec_tui.sim --model-path sim-model --tp-size 4 "
            f"--speculative-algorithm EAGLE --port {port} --speculative-num-steps {steps} "
            f"--speculative-eagle-topk 1 --speculative-num-draft-tokens {steps + 1} --time-scale 20"
        )
    return f"{sys.executable} -u {ARGV_SERVER} --port {port} --speculative-num-steps {steps}"


def unit_text(exec_start: str, description: str = "specdec hostlab server") -> str:
    return (
        f"[Unit]\nDescription={description}\n\n"
        f"[Service]\nExecStart={exec_start}\nWorkingDirectory={REPO}\nEnvironment=PYTHONPATH={REPO / 'src'}\n"
        "Restart=no\n\n[Install]\nWantedBy=multi-user.target\n"
    )


@dataclass
class LabService:
    """A unit installed and started on the lab host; `text_with(steps)` writes the variant to push."""

    lab: HostLab
    unit: str
    port: int
    text: str

    @property
    def path(self) -> str:
        return f"/etc/systemd/system/{self.unit}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def text_with(self, steps: int) -> str:
        return unit_text(server_exec(self.port, steps))

    def read_on_host(self, path: str | None = None) -> bytes:
        return self.lab.run(["cat", path or self.path]).stdout.encode()

    def server_info(self, timeout: float = 20.0) -> dict:
        """The running server's /get_server_info; fails at once, in words, if the unit is not running."""
        return wait_until_serving(self.lab, self.unit, self.port, timeout)


def unit_problem(lab: HostLab, unit: str) -> str | None:
    """None while `unit` is starting or running; otherwise what systemd says about it: its state,
    `systemctl status` (which names the failed step, e.g. status=203/EXEC) and the journal of this start."""
    props = lab.run(["systemctl", "show", "-p", "ActiveState", "-p", "SubState", "-p", "Result",
                     "-p", "ExecMainStatus", "-p", "InvocationID", unit], check=False).stdout
    state = dict(line.split("=", 1) for line in props.splitlines() if "=" in line)
    if state.get("ActiveState") in ("active", "activating", "reloading"):
        return None
    invocation = state.pop("InvocationID", "")
    journal = lab.run(["journalctl", f"_SYSTEMD_INVOCATION_ID={invocation}", "-n", "15", "--no-pager", "-o", "cat"],
                      check=False).stdout.rstrip() if invocation else ""
    status = lab.run(["systemctl", "status", "--no-pager", "--full", "-n", "0", unit], check=False).stdout.rstrip()
    return (f"{unit} is not running: " + " ".join(f"{k}={v}" for k, v in sorted(state.items()))
            + "\n" + status + "\nits journal (this start) ends with:\n" + (journal or "(no lines)"))


def wait_until_serving(lab: HostLab, unit: str, port: int, timeout: float = 20.0) -> dict:
    """Waits for the unit's server to answer /get_server_info; fails AT ONCE, with the unit's state and
    journal, when the unit has failed or stopped (nothing would ever answer)."""
    def fetch() -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/get_server_info", timeout=1) as resp:
                return json.loads(resp.read())
        except OSError:
            problem = unit_problem(lab, unit)
            if problem:
                pytest.fail(problem, pytrace=False)
            return None

    return wait_for(fetch, timeout, f"{unit} to answer on 127.0.0.1:{port}/get_server_info", interval=0.1)


async def while_unit_runs(stream: AsyncIterator[T], lab: HostLab, unit: str, every: float = 0.5) -> AsyncIterator[T]:
    """Yields what `stream` yields (a journal follow); whenever it is silent for `every` seconds, checks
    the unit: a follow waiting for lines from a unit that failed fails AT ONCE with its state and journal
    instead of waiting out the test's time limit."""
    iterator = stream.__aiter__()
    while True:
        step = asyncio.ensure_future(iterator.__anext__())
        while not (await asyncio.wait({step}, timeout=every))[0]:
            problem = await asyncio.to_thread(unit_problem, lab, unit)
            if problem:
                step.cancel()
                await asyncio.wait({step})  # let the stream finish cancelling, so it can be closed
                pytest.fail(problem, pytrace=False)
        try:
            item = step.result()
        except StopAsyncIteration:
            return
        yield item


def install_service(lab: HostLab, unit: str, text: str, port: int) -> None:
    """Installs and starts `unit`, and returns once its server answers: a unit that cannot start fails
    the test at once with systemd's state and the unit's journal."""
    lab.run(["systemctl", "stop", unit], check=False)
    lab.run(["systemctl", "reset-failed", unit], check=False)
    lab.run(["rm", "-rf", f"/etc/systemd/system/{unit}", "/etc/systemd/system/.specdec"])
    lab.run(["tee", f"/etc/systemd/system/{unit}"], input=text)
    lab.run(["systemctl", "daemon-reload"])
    lab.run(["systemctl", "start", unit])
    wait_until_serving(lab, unit, port)


@pytest.fixture
def lab_service(hostlab: HostLab) -> Iterator[LabService]:
    port = free_port()
    service = LabService(hostlab, UNIT, port, unit_text(server_exec(port, 3)))
    install_service(hostlab, UNIT, service.text, port)
    yield service
    hostlab.run(["systemctl", "stop", UNIT], check=False)


@pytest.fixture
def ticker_service(hostlab: HostLab) -> Iterator[LabService]:
    """A unit that prints numbered `tick N` lines ten times a second (journal loss/duplicate checks)."""
    port = free_port()
    text = unit_text(f"{sys.executable} -u {ARGV_SERVER} --port {port} --tick-interval 0.05", "specdec ticker")
    install_service(hostlab, TICKER_UNIT, text, port)
    yield LabService(hostlab, TICKER_UNIT, port, text)
    hostlab.run(["systemctl", "stop", TICKER_UNIT], check=False)


@pytest.fixture
async def make_ssh_host(hostlab: HostLab) -> AsyncIterator[Callable[..., SSHHost]]:
    """Builds SSHHost objects for the lab (trusted host key unless `trust=False`); closes them after."""
    made: list[SSHHost] = []

    def make(unit: str = UNIT, *, trust: bool = True, known_hosts: Path | None = None, **config) -> SSHHost:
        known = known_hosts or hostlab.known_hosts
        if trust:
            known.write_text(hostlab.host_key_line())
        cfg = HostConfig(name="lab", address="hostlab", unit=unit, **{"user": "root", **config})
        host = SSHHost(
            cfg, known_hosts=known, ssh_config=hostlab.ssh_config, client_keys=[hostlab.client_key],
            agent_path=None, reconnect_delays=(0.05, 0.1, 0.2, 0.5, 1.0),
        )
        made.append(host)
        return host

    yield make
    for host in made:
        await host.close()


def lab_in_home_ssh(lab: HostLab, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `home` the user's home with the lab in its ~/.ssh (config and known_hosts) and no agent: the CLI then
    reaches `hostlab` through OpenSSH's defaults, as a user's own ssh would."""
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir()
    (ssh_dir / "config").write_text(lab.ssh_config.read_text())
    (ssh_dir / "known_hosts").write_text(lab.host_key_line())
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
