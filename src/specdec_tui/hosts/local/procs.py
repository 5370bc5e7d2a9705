"""Process facts the local host relies on, read from the kernel rather than assumed.

Why not just `kill(pid, 0)`: in a container whose init never reaps, an exited process stays a zombie
forever and `kill(pid, 0)` still succeeds. A zombie has stopped running, so "alive" here means the
process exists and is not a zombie; a process group is alive while one of its members is.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the `(comm)` field: state, ppid, pgrp, ... (None when gone)."""
    try:
        raw = (PROC / str(pid) / "stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return raw[raw.rfind(b")") + 2 :].decode(errors="replace").split()


def pid_running(pid: int | None) -> bool:
    """The process exists and has not exited (a zombie counts as exited)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if not PROC.is_dir():
        return True
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def cmdline_has(pid: int, word: bytes) -> bool:
    """Guards against pid reuse: the process at `pid` runs something naming `word`."""
    try:
        return word in (PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return not PROC.is_dir()


def signal_group(pgid: int | None, sig: int) -> bool:
    if not pgid or pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def group_alive(pgid: int | None) -> bool:
    """Some member of the process group still runs (zombie members do not count)."""
    if not signal_group(pgid, 0):
        return False
    if not PROC.is_dir():
        return True
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                return True
    return False
