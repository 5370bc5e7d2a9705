"""Issue 36, point 7 (the panel): SIGTERM or SIGHUP to the real `specdec-tui --demo` in a terminal while it
benchmarks is an interrupt: the benchmark's trial is recorded cancelled, the program exits non-zero, and the
demo's simulated server and the journal child do not outlive it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from specdec_tui.core import paths
from specdec_tui.core.session import load_session
from specdec_tui.hosts.local.state import read_state, state_path
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.proc_helpers import running
from tests.test_serve_signals import descendants
from tests.tmux_session import Tmux, panel_env

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(240)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_the_panel_benchmarks_cancels_the_trial_and_stops_everything(tmux: Tmux,
                                                                                     sig: signal.Signals) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=5)
    env = panel_env()
    tmux.start([sys.executable, "-m", "specdec_tui", "--demo"], env)
    tmux.wait_for(lambda s: "specdec-tui" in s and "Push" in s, "the panel's first frame")
    tmux.keys("4")
    tmux.wait_for(lambda s: "READY" in s, "the demo server READY", timeout_s=90)
    tmux.keys("b")
    # the bench status line ("Level c=1: 1/8 requests, …") is the trial's: "running" alone also matched the
    # Health pane's "systemd: active (running)" beside it, before the benchmark had started its trial
    tmux.wait_for(lambda s: "Level c=1:" in s, "the benchmark running")
    shell = int(tmux.run("display", "-p", "-t", "t", "#{pane_pid}").strip())
    below = {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in descendants(shell) | {shell}}
    panel = next((p for p, cmd in below.items()
                  if cmd.split(b"\0")[1:4] == [b"-m", b"specdec_tui", b"--demo"]), None)  # python -m specdec_tui
    assert panel is not None, below
    state = read_state(state_path(ws.root, ws.unit_name))
    assert state is not None and running(state.main_pid)
    ours = descendants(panel) | {p for p in (state.supervisor_pid, state.main_pid) if p} | {panel}
    os.kill(panel, sig)
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit", timeout_s=60)
    assert f"EXITED:{128 + sig}" in final and "Traceback" not in final, final
    deadline = time.monotonic() + 20
    while any(running(p) for p in ours) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in ours if running(p)], "a process outlived the panel"
    (path,) = sorted(paths.sessions_dir().glob("*.toml"))
    statuses = [t.status for t in load_session(path).trials]
    assert statuses and statuses[-1] == "cancelled" and "running" not in statuses, statuses


def test_a_panel_whose_terminal_is_killed_exits_and_takes_its_processes_with_it(tmux: Tmux) -> None:
    """Its terminal gone (the tmux server killed, as a closed SSH session or a CI teardown does), the panel gets
    SIGHUP and SIGCONT and its writes fail: it must still exit, and its demo server and journal child with it.
    Before the fix Textual's resumed writer thread died on the dead terminal, its queue filled, and the panel's
    shutdown waited for ever (CI left such panels with parent 1; a later SIGTERM waited too)."""
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)
    env = panel_env()
    tmux.start([sys.executable, "-m", "specdec_tui", "--demo"], env)
    # killed while the demo server starts: the panel is writing (journal lines, the health pane's phases) as it dies
    tmux.wait_for(lambda s: "Push" in s and "speculative-num-steps" in s, "the Config form")
    shell = int(tmux.run("display", "-p", "-t", "t", "#{pane_pid}").strip())
    deadline = time.monotonic() + 30
    while (state := read_state(state_path(ws.root, ws.unit_name))) is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until the demo's service has its supervisor (the processes to account for)
    assert state is not None and state.supervisor_pid
    below = {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in descendants(shell)}
    panel = next(p for p, cmd in below.items() if cmd.split(b"\0")[1:4] == [b"-m", b"specdec_tui", b"--demo"])
    ours = descendants(panel) | {p for p in (state.supervisor_pid, state.main_pid) if p} | {panel}
    tmux.kill()
    deadline = time.monotonic() + 45  # the bound on Textual's shutdown (10 s) and the demo server's stop (10 s)
    while any(running(p) for p in ours) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in ours if running(p)}
    for p in left:
        os.kill(p, signal.SIGKILL)  # not left behind on the machine whatever the verdict
    assert not left, f"processes outlived their terminal: {left}"
