"""Reading a file the user named or a directory holds (a session, its cache, the config, a theme) only when it is a
regular file. A FIFO named like a session blocked `session list`, the panel's start and `--config` for ever (its
open waits for a writer), and a symlink to /dev/zero was read until memory ran out (MemoryError, or the machine's
OOM killer first). The open never blocks; what the path is instead is said in words, as an OSError, so every
reader's existing "cannot read" message carries it."""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "open_regular", "read_regular_text"]


class NotRegularFile(OSError):
    """The path is a directory, a FIFO, a device or a socket; or a regular file larger than the reader takes."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()  # the words, without "[Errno 22]"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path | str, *, max_bytes: int | None = None) -> BinaryIO:
    """`path` open for reading (binary), if it is a regular file of at most `max_bytes`; else NotRegularFile."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # O_NONBLOCK: a FIFO's open returns at once
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _kind(info.st_mode)
            raise NotRegularFile(errno.EINVAL, f"it is {kind}, not a regular file" if kind.startswith("a ") else kind)
        if max_bytes is not None and info.st_size > max_bytes:
            raise NotRegularFile(errno.EFBIG, f"it is {info.st_size:,} bytes, more than the {max_bytes:,} this reads: "
                                              "is it the right file?")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_text(path: Path | str, *, max_bytes: int | None = None) -> str:
    """The UTF-8 text of the regular file at `path` (`open_regular`), newlines as `Path.read_text` gives them;
    UnicodeDecodeError as it raises."""
    with io.TextIOWrapper(open_regular(path, max_bytes=max_bytes), encoding="utf-8") as f:
        return f.read()
