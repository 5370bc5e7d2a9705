"""Which process runs a trial, so a trial left "running" by a process that died (SIGKILL, a crash, a power cut) is
read as interrupted and not as running for ever, while a trial another live process really runs is left alone.

Each process that starts a trial holds an `flock` on a file of its own under the data directory for as long as it
lives (the kernel lets go of it when the process ends, however it ends), and the trial records that file's name
(`writer`). A reader finds the file unlocked: its writer is gone. No name, no file (a session from another machine
or data directory, or from before this), or a file it cannot look at: nothing is known, and the trial stays as
written — a live trial is never called dead."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import secrets
import string
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.core.paths import data_dir
from specdec_tui.core.terminal_codes import terminal_safe

if TYPE_CHECKING:
    from specdec_tui.core.session import Trial

INTERRUPTED = "interrupted: the process that ran it ended without finishing it (killed?)"

_HEX = frozenset(string.hexdigits.lower())
_held: dict[int, str] = {}  # pid → this process's writer name (a forked child takes its own)


def writers_dir() -> Path:
    return data_dir() / "writers"


def _lock_file(name: str) -> Path:
    return writers_dir() / f"{name}.lock"


def this_writer() -> str:
    """This process's writer name, its lock file made and held on first use; "" when the data directory takes no
    file (then its trials are never called interrupted: as before this existed)."""
    pid = os.getpid()
    if pid in _held:
        return _held[pid]
    name = secrets.token_hex(8)
    try:
        os.makedirs(writers_dir(), exist_ok=True)
        fd = os.open(_lock_file(name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, by the open fd, until the process ends
    except OSError:
        name = ""
    else:
        atexit.register(_let_go, pid, _lock_file(name))
    _held[pid] = name
    return name


def _let_go(pid: int, path: Path) -> None:
    """A process that ends as it should takes its file away (its trials have ended): only a killed one's stay.
    Not a forked child's exit: the file is its parent's."""
    if os.getpid() == pid:
        with contextlib.suppress(OSError):
            path.unlink()


def writer_gone(name: str) -> bool:
    """True only when `name`'s lock file is here and no process holds it: the process that wrote it ended."""
    if not name or len(name) > 64 or not set(name) <= _HEX or name == _held.get(os.getpid()):
        return False  # another file's text is never a path
    try:
        fd = os.open(_lock_file(name), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return False  # held: the writer runs
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def interrupted(status: str, writer: str) -> bool:
    """A trial written as running whose writer is gone."""
    return status == "running" and writer_gone(writer)


def interrupted_words(trials: Sequence[Trial]) -> str:
    """What a start says of the trials it found interrupted ("": none): which, why, and what of them is kept."""
    if not trials:
        return ""
    names = ", ".join(f"{t.id}" + (f" ({terminal_safe(t.label)})" if t.label else "") for t in trials)  # file's text
    levels = sum(len(t.levels) for t in trials)
    one = len(trials) == 1
    it, was = ("it", "was") if one else ("them", "were")
    kept = (f"{'it' if one else 'they'} finished no level" if not levels else
            f"the {levels} level{'s' if levels != 1 else ''} {'it' if one else 'they'} finished "
            f"{'is' if levels == 1 else 'are'} kept")
    return (f"Trial{'' if one else 's'} {names} {was} interrupted: the process that ran {it} ended without "
            f"finishing {it} (killed?); {kept}, recorded as cancelled.")
