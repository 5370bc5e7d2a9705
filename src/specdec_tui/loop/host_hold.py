"""A host held by a sweep or tune, for every trial loop on it — this process's other loops and other specdec-tui
processes alike: one lock file per host under the data directory (an `flock`, so a process that dies, even by
SIGKILL, lets go of it), with who holds it and since when written inside for the words of a refusal.

Why a file and not the loop's busy state alone: a sweep on several hosts drives the others through loops of
its own (`loop.host_group.OtherHosts`, or the CLI's), so a panel on one of those hosts (another terminal) saw
it idle and pushed, restarted or benchmarked under the sweep. Steps of the holding task itself never look here
(`loop.busy`: a task's own loops run its steps)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from specdec_tui.core.paths import data_dir
from specdec_tui.hosts.base import HostInfo


def holds_dir() -> Path:
    return data_dir() / "holds"


def _lock_path(info: HostInfo) -> Path:
    """One file per served unit: where it is (kind, address, unit file), not what a config calls it."""
    key = "\0".join((info.kind, info.address, info.unit, info.unit_path))
    return holds_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.lock"


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a host: the task ("sweep", "tune"), its process, since when, and the command that runs it."""

    what: str
    pid: int
    since: float
    command: str

    def words(self, host: str) -> str:
        """Which task holds `host` and how to stop it, for a refusal."""
        at = time.strftime("%H:%M:%S", time.localtime(self.since))
        if self.pid == os.getpid():
            return (f"{host} is held by the {self.what} running here since {at}: let it finish, or cancel it "
                    f"(escape on its {self.what.capitalize()} screen, Ctrl-C for a command).")
        return (f"{host} is held by a {self.what} of another specdec-tui (process {self.pid}, {self.command}) since "
                f"{at}: let it finish, or cancel it there (escape on its {self.what.capitalize()} screen, Ctrl-C "
                f"where the command runs).")


def _command() -> str:
    words = [os.path.basename(sys.argv[0]) or "specdec-tui", *sys.argv[1:2]]
    return " ".join(w for w in words if w and not w.startswith("-"))[:60] or "specdec-tui"


def _read_holder(fd: int) -> Holder | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return Holder(str(data["what"]), int(data["pid"]), float(data["since"]), str(data["command"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def holder_of(info: HostInfo) -> Holder | None:
    """Who holds the host now, None when nothing does (or the hold cannot be looked at: nothing to refuse on)."""
    path = _lock_path(info)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or Holder("task", 0, time.time(), "unknown")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class HostHeld(Exception):
    """The host is held by another task: `holder` says which."""

    def __init__(self, holder: Holder) -> None:
        super().__init__(holder.what)
        self.holder = holder


@contextlib.contextmanager
def holding(info: HostInfo, what: str) -> Iterator[None]:
    """Hold the host for the task `what` until the block ends; HostHeld when another task holds it. A lock file
    that cannot be made (a read-only data directory) holds nothing: the task runs as before this existed."""
    try:
        holds_dir().mkdir(parents=True, exist_ok=True)
        fd = os.open(_lock_path(info), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HostHeld(_read_holder(fd) or Holder("task", 0, time.time(), "unknown")) from None
        data = json.dumps({"what": what, "pid": os.getpid(), "since": time.time(), "command": _command()})
        os.ftruncate(fd, 0)
        os.pwrite(fd, data.encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # before the unlock: a reader never sees the words of a task that ended
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
