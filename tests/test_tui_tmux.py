"""The real terminal program under tmux: `specdec-tui --demo`, driven by keys, read back from the screen."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from specdec_tui.core import paths
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from tests.tmux_session import Tmux, panel_env, program

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(180)]


def service_pid(workspace: Path) -> int | None:
    for run_file in (workspace / "run").glob("*.json"):
        data = json.loads(run_file.read_text())
        return int(data.get("main_pid") or 0) or None
    return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_demo_in_tmux_starts_itself_health_journal_help_quit(tmux: Tmux) -> None:
    ws = ensure_demo_workspace(paths.demo_dir(), time_scale=20)  # same workspace the program will open
    env = panel_env()
    tmux.start(program() + ["--demo"], env)

    tmux.wait_for(lambda s: "specdec-tui" in s and "Push" in s, "the panel's first frame")
    tmux.keys("3")  # Health tab; the demo starts its (inactive) service by itself, no r needed
    tmux.wait_for(lambda s: "READY" in s.upper() and "max_running_requests" in s, "health READY")
    # steps 1 → SGLang's max_running_requests 26, as in the seed (the facts follow READY within a poll)
    tmux.wait_for(lambda s: any("max_running_requests" in line and "26" in line for line in s.splitlines()),
                  "the server's facts")

    tmux.keys("2")  # Journal tab
    tmux.wait_for(lambda s: "fired up and ready to roll" in s, "the server's ready line in the journal")

    tmux.keys("?")
    help_screen = tmux.wait_for(lambda s: "remap them with [ui.keymap]" in s, "the help screen")
    # Every binding is listed with its keys and its id (the name [ui.keymap] remaps it by).
    assert "rollback" in help_screen and "^s" in help_screen and "tab-journal" in help_screen
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "remap them with [ui.keymap]" not in s, "the help screen to close")

    pid = service_pid(ws.root)
    assert pid is not None and alive(pid)
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "EXITED:" in s or "Quit" in s, "quit (or its confirmation)")
    if "EXITED:" not in tmux.screen():
        tmux.keys("y")
    final = tmux.wait_for(lambda s: "EXITED:" in s, "the program to exit")
    assert "EXITED:0" in final, final
    assert "Traceback" not in final
    deadline = time.monotonic() + 15
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), "the demo's simulated server outlived the panel"
