"""Crash-safe file replacement: a reader sees the old bytes or the new ones, never a torn file.

The temp file is named `.NAME.PID.xxxx.tmp`: a save killed before its rename leaves one, and the next save
beside it removes those whose process is gone (a running process's temp file is its save in progress). A path
that is a symlink is written through: the file it points to is replaced, the link stays."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# A temp file without a process id in its name (written before it had one) is left alone this long.
STALE_UNNAMED_S = 3600.0


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: running
        return False
    return False


def clean_stale_temps(path: Path) -> list[Path]:
    """Removes the temp files that killed saves of `path` left (their process is gone); returns them."""
    prefix = f".{path.name}."
    removed: list[Path] = []
    try:
        candidates = [p for p in path.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")]
    except OSError:
        return removed
    for tmp in candidates:
        pid_text, dot, _rest = tmp.name[len(prefix):].partition(".")
        try:
            stale = (_process_gone(int(pid_text)) if dot and pid_text.isdigit()
                     else time.time() - tmp.stat().st_mtime > STALE_UNNAMED_S)
            if stale:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            continue
    return removed


_IOV_MAX = 1024  # pieces a writev takes at once (POSIX's minimum is 16; Linux takes 1024)


def _write_pieces(fd: int, pieces: Sequence[bytes]) -> None:
    """Every piece written in order, a writev per 1,024 (the GIL released while the kernel copies them): a 6 MB
    session of 1,000 tables was ~700 buffered writes, or one copy of the whole joined first."""
    for at in range(0, len(pieces), _IOV_MAX):
        group = pieces[at:at + _IOV_MAX]
        done = os.writev(fd, group)
        if done < sum(map(len, group)):  # a short write (a signal, a full disk): the rest one write at a time
            rest = memoryview(b"".join(group))[done:]
            while rest:
                rest = rest[os.write(fd, rest):]


def write_atomic(path: Path | str, data: bytes | str | Sequence[bytes], *, mode: int | None = None) -> None:
    """Write `data` to a temp file beside `path`, fsync it, rename it over `path`, fsync the directory.

    The temp file lives in the same directory so the rename is atomic on POSIX filesystems. `data` may be the file's
    pieces in order (a session's tables, kept encoded between saves): written one after another, never joined.
    """
    path = Path(os.path.realpath(path))  # a symlink: replace the file it names, keep the link
    payload: bytes | Sequence[bytes] = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        clean_stale_temps(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(payload, bytes):
                handle.write(payload)
            else:
                _write_pieces(handle.fileno(), payload)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        elif path.exists():
            os.chmod(tmp_name, path.stat().st_mode & 0o7777)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
