"""The real program in a tmux pane: send keys, capture the screen, wait for what a person would see.
`tmux` is a fixture (registered in conftest through `pytest_plugins`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import require


def panel_env() -> dict[str, str]:
    """The environment a test's panel runs in: the test's own data and config directories (conftest's), a terminal
    type Textual draws every colour for."""
    return {"SPECDEC_TUI_DATA_DIR": os.environ["SPECDEC_TUI_DATA_DIR"],
            "SPECDEC_TUI_CONFIG_DIR": os.environ["SPECDEC_TUI_CONFIG_DIR"], "TERM": "xterm-256color"}


class Tmux:
    """One tmux server on a private socket, so the test never touches the user's sessions."""

    def __init__(self) -> None:
        self.socket = f"specdec-test-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True).stdout

    def start(self, command: list[str], env: dict[str, str], width: int = 160, height: int = 48) -> None:
        exports = " ".join(f"{k}={v!s}" for k, v in env.items())
        # COLUMNS/LINES (set by some test runners) would override the pane size Textual reads.
        shell = f"env -u COLUMNS -u LINES {exports} {' '.join(command)}; echo EXITED:$?; sleep 30"
        self.run("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), shell)
        # Without an attached client tmux may keep its default size; pin the window to the one asked for.
        self.run("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout_s: float = 60) -> str:
        """Poll the screen until `condition` holds; fail with the last screen if it never does."""
        deadline = time.monotonic() + timeout_s
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen was:\n{screen}")

    def kill(self) -> None:
        """Stops this tmux server; a later `start` gets a server of its own (a new socket), never one that may
        still be shutting down (CI saw `new-session` fail right after `kill-server` on the same socket)."""
        path = subprocess.run(["tmux", "-L", self.socket, "display-message", "-p", "#{socket_path}"],
                              capture_output=True, text=True).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        if path:  # tmux leaves its socket file behind: ~300 of them had piled up in /tmp/tmux-0 on this machine
            Path(path).unlink(missing_ok=True)
        self.socket = f"specdec-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    require(shutil.which("tmux") is not None, "tmux is not installed (apt-get install tmux)")
    t = Tmux()
    try:
        yield t
    finally:
        t.kill()


def program() -> list[str]:
    script = shutil.which("specdec-tui")
    if script and Path(script).resolve().parent == Path(sys.executable).resolve().parent:
        return [script]
    return [sys.executable, "-m", "specdec_tui"]
