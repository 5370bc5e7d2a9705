"""Demo services a test left running, stopped when it ends.

A host opened like a real one (`keep_running=True`: the other hosts of a sweep or a tune, headless commands) leaves
the service it started running when it closes, as systemd does — so a test that starts one and does not stop it
left a simulator and its supervisor behind after pytest exited (found: every run of the two-host tune test). The
supervisors are found by their command line (`-m specdec_tui.hosts.local.supervisor WORKSPACE …`) with the
workspace under the test's own temporary directory, and stopped as `systemctl stop` would (SIGTERM: the supervisor
stops its server, then exits)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

SUPERVISOR = "specdec_tui.hosts.local.supervisor"


def supervisors_under(root: Path) -> list[int]:
    """The pids of the local-host supervisors whose workspace lies under `root`."""
    found = []
    prefix = str(root.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in argv]
        if SUPERVISOR in words:
            at = words.index(SUPERVISOR)
            if at + 1 < len(words) and (words[at + 1] == prefix or words[at + 1].startswith(prefix + os.sep)):
                found.append(int(entry.name))
    return found


def stop_supervisors(pids: list[int], timeout_s: float = 15.0) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
        if pids:
            time.sleep(0.05)
    for pid in pids:  # a supervisor that did not stop in time: its whole session (it runs in its own)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True
