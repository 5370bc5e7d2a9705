"""The demo host driven like a real systemd host: separate commands, one service that outlives them.

Every command here is its own process (`python -m specdec_tui ...`), as in a shell script. The service
runs under the local supervisor; the tests find its processes through the pids the state file records
and check them in /proc (a zombie counts as gone: this container's init never reaps), never by name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

from specdec_tui.core import paths
from specdec_tui.hosts.local.state import read_state, state_path
from tests.proc_helpers import group_alive, running

pytestmark = pytest.mark.timeout(90)
FAST = 50.0  # the simulator's time scale: startup in a fraction of a second


def wait_gone(pids: list[int], timeout: float = 15) -> list[int]:
    """The pids still running after at most `timeout` (polling the kernel, not sleeping a fixed time)."""
    deadline = time.monotonic() + timeout
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p for p in pids if running(p)]


def cli(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"})  # fmt: skip


def wait_healthy(base_url: str, timeout: float = 30) -> int:
    """GET /health until it answers 200 (the simulator's startup takes a moment); the last status."""
    deadline = time.monotonic() + timeout
    code = 0
    while time.monotonic() < deadline:
        try:
            code = httpx.get(f"{base_url}/health", timeout=2).status_code
        except httpx.TransportError:
            code = 0
        if code == 200:
            return code
        time.sleep(0.05)
    return code


@pytest.fixture
def demo_ws():
    """The user's demo workspace (under the test's private SPECDEC_TUI_DATA_DIR), fast simulator."""
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=FAST)
    yield ws
    cli("host", "stop", "--host", "demo")  # whatever a failed assertion left running


def test_a_script_restarts_benchmarks_reads_the_journal_and_stops_the_demo_host(demo_ws):
    restarted = cli("host", "restart", "--host", "demo")
    assert restarted.returncode == 0, restarted.stderr
    assert "job done; now active (running)" in restarted.stdout
    state = read_state(state_path(demo_ws.root, demo_ws.unit_name))
    assert state is not None and state.owner_pid is None  # nobody's exit stops it
    pids = [state.supervisor_pid, state.main_pid]
    assert all(running(p) for p in pids)  # the command has exited; its service has not

    assert wait_healthy(demo_ws.base_url) == 200
    bench = cli("bench", "--host", "demo", "--concurrency", "1", "--requests", "2", "--max-tokens", "16", "--json")
    assert bench.returncode == 0, bench.stderr
    level, summary = (json.loads(line) for line in bench.stdout.splitlines())
    assert level["concurrency"] == 1 and level["requests"] == 2 and level["errors"] == 0
    assert level["output_tokens"] == 32 and summary["best_output_tok_s"] > 0

    status = cli("host", "status", "--host", "demo")
    assert status.returncode == 0 and f"active (running) pid={state.main_pid}" in status.stdout

    journal = cli("host", "journal", "--host", "demo", "-n", "50")
    assert journal.returncode == 0, journal.stderr
    assert "The server is fired up and ready to roll!" in journal.stdout
    assert "POST /v1/completions" in journal.stdout  # the benchmark's requests, logged by the server
    everything = cli("host", "journal", "--host", "demo", "-n", "100000").stdout
    assert everything.count("Started sglang-demo.service") == 1

    stopped = cli("host", "stop", "--host", "demo")
    assert stopped.returncode == 0, stopped.stderr
    assert "now inactive (dead) result=success" in stopped.stdout
    assert wait_gone(pids, timeout=0) == []  # `host stop` returned after they were gone
    assert not group_alive(state.main_pid)
    assert "Stopped sglang-demo.service" in cli("host", "journal", "--host", "demo", "-n", "5").stdout

    refused = cli("bench", "--host", "demo", "--json")
    assert refused.returncode == 1
    assert "the demo host's service is not running" in refused.stderr
    assert "specdec-tui host restart --host demo" in refused.stderr and "Traceback" not in refused.stderr


def test_a_second_restart_replaces_the_service_and_its_supervisor(demo_ws):
    assert cli("host", "restart", "--host", "demo").returncode == 0
    first = read_state(state_path(demo_ws.root, demo_ws.unit_name))
    assert cli("host", "restart", "--host", "demo").returncode == 0
    second = read_state(state_path(demo_ws.root, demo_ws.unit_name))
    assert first is not None and second is not None
    assert second.main_pid != first.main_pid and second.supervisor_pid != first.supervisor_pid
    assert wait_gone([first.supervisor_pid, first.main_pid], timeout=0) == []
    assert running(second.main_pid) and wait_healthy(demo_ws.base_url) == 200


def test_bench_on_a_configured_ssh_host_uses_its_base_url_without_connecting(tmp_path: Path, demo_ws):
    """The SSH host's address is unreachable on purpose: bench only needs its base_url."""
    assert cli("host", "restart", "--host", "demo").returncode == 0
    assert wait_healthy(demo_ws.base_url) == 200
    config = tmp_path / "config.toml"
    config.write_text(f'schema_version = 1\n\n[hosts.gpu]\naddress = "gpu.invalid"\nunit = "sglang.service"\n'
                      f'base_url = "{demo_ws.base_url}"\n')  # fmt: skip
    bench = cli("--config", str(config), "bench", "--host", "gpu", "--concurrency", "1", "--requests", "1",
                "--max-tokens", "8", "--json")  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    assert json.loads(bench.stdout.splitlines()[-1])["errors"] == 0


# -- a panel's service (keep_running=False) --------------------------------------------------------

PANEL = r"""
import asyncio, os, signal, sys
from pathlib import Path
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.state import read_state, state_path

async def main():
    ws = ensure_demo_workspace(Path(sys.argv[1]), time_scale=50)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url)  # the panel's default: it owns what it starts
    await host.restart()
    async for record in host.journal():
        if "fired up and ready" in record.message:
            break
    state = read_state(state_path(ws.root, ws.unit_name))
    print("READY", state.supervisor_pid, state.main_pid, state.owner_pid == os.getpid(), flush=True)
    if sys.argv[2] == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if sys.argv[2] == "close":
        await host.close()

asyncio.run(main())
"""


@pytest.mark.parametrize("ending", ["close", "exit", "sigkill"])
def test_a_panel_leaves_no_process_behind(tmp_path: Path, ending: str):
    """close(): stopped before it returns; exit without close, or SIGKILL: the supervisor's watchdog."""
    ws_root = tmp_path / "ws"
    panel = subprocess.run([sys.executable, "-c", PANEL, str(ws_root), ending], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    ready = panel.stdout.split()
    assert ready[:1] == ["READY"], panel.stderr
    supervisor_pid, main_pid, owned = int(ready[1]), int(ready[2]), ready[3]
    assert owned == "True"
    assert wait_gone([supervisor_pid, main_pid], timeout=0 if ending == "close" else 15) == []
    assert not group_alive(main_pid)
    final = read_state(state_path(ws_root, "sglang-demo.service"))
    assert final is not None and final.is_final and final.main_pid is None
    journal = (ws_root / "journal.jsonl").read_text()
    assert "Stopped sglang-demo.service" in journal
    assert ("that started it exited; stopping it too" in journal) == (ending != "close")
