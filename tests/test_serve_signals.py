"""Issue 36, point 12: SIGHUP to `specdec-tui serve` (its terminal closed) stops it as SIGTERM and Ctrl+C do: no
panel, journal child, supervisor or simulated server outlives it. Real `serve --demo`, a real page in headless
Chromium, real signals; the process table is read from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from specdec_tui.core import paths
from specdec_tui.hosts.local.state import read_state, state_path
from specdec_tui.hosts.local.workspace import ensure_demo_workspace, free_port
from tests.cdp_browser import Chromium
from tests.proc_helpers import running
from tests.test_serve_browser import printed_url, wait_until_serving
from tests.tmux_session import program

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]



def descendants(pid: int) -> set[int]:
    """Every running process below `pid`, from /proc."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent[int(entry.name)] = int(stat[stat.rfind(")") + 2:].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, up in parent.items() if up in frontier and child not in found}
        found |= frontier
    return {p for p in found if running(p)}


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=lambda s: s.name)
async def test_a_signal_to_serve_leaves_no_process_behind(browser: Chromium, tmp_path: Path, sig: signal.Signals) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    port = free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    with log.open("wb") as out:
        serve = subprocess.Popen([*program(), "serve", "--demo", "--port", str(port)], stdout=out,
                                 stderr=subprocess.STDOUT, env=env, start_new_session=True)
    ours: set[int] = set()
    try:
        url = printed_url(serve, log)  # with this start's token
        wait_until_serving(serve, url, log)
        await browser.open(url)
        await browser.wait_for_screen(lambda s: "specdec-tui — demo" in s and "4 Bench" in s, "the panel's first frame")
        await browser.press("2")  # the journal tab: its follow and its parsing child run
        await browser.press("4")
        await browser.wait_for_screen(lambda s: "READY" in s, "the demo server READY")
        state = read_state(state_path(ws.root, ws.unit_name))
        assert state is not None and running(state.supervisor_pid) and running(state.main_pid)
        ours = descendants(serve.pid) | {p for p in (state.supervisor_pid, state.main_pid) if p}
        assert len(ours) >= 4, ours  # the panel, its journal child, the supervisor, the simulated server

        serve.send_signal(sig)
        serve.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(running(p) for p in ours) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {p: Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")[:120] for p in ours if running(p)}
        assert not left, f"outlived serve after {sig.name}: {left}\n{log.read_text(errors='replace')}"
        assert "Traceback" not in log.read_text(errors="replace")
    finally:
        for p in ours | descendants(serve.pid):
            if running(p):
                os.kill(p, signal.SIGKILL)
        if serve.poll() is None:
            serve.kill()
            serve.wait(timeout=10)
