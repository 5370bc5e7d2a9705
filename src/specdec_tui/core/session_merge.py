"""Several writers of one session file (the panel, `bench --record`, a headless sweep): each save merges
what the others wrote since, under a lock, so no trial is lost and no two trials share an id."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specdec_tui.core.session import Session, Trial

LOCK_NAME = ".specdec-sessions.lock"
DiskStamp = tuple[int, int, int]  # (inode, size, mtime_ns): the file as a writer last saw it


def disk_stamp(path: Path) -> DiskStamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@contextmanager
def session_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on one hidden file of the session's directory (the session itself is replaced by
    rename, so it cannot hold one; one file for the directory, so locks do not pile up beside the sessions)."""
    lock_path = path.parent / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _key(trial: Trial) -> tuple[str, str | int]:
    """Which trial this is across writers: its uid, or its id for trials written before uids."""
    return ("uid", trial.uid) if trial.uid else ("id", trial.id)


def same_session(mine: Session, disk: Session) -> bool:
    """The file holds the session this writer loaded (not another one saved over the same name)."""
    return mine.created == disk.created and mine.host == disk.host


def merge_into(mine: Session, disk: Session) -> None:
    """Make `mine` the union of both: the disk's trials in the disk's order, this writer's version of the
    trials it holds, then its new ones; a new trial whose id another writer took meanwhile gets the next free id
    (the object is renumbered in place, so the caller says the id it was recorded as)."""
    held = {_key(t): t for t in mine.trials}
    merged: list[Trial] = []
    for trial in disk.trials:
        own = held.pop(_key(trial), None)
        if own is not None:
            own.id = trial.id  # the file's id for a trial already in it (another writer's save renumbered it)
        merged.append(own if own is not None else trial)
    taken = {t.id for t in merged}
    for trial in mine.trials:
        if _key(trial) not in held:
            continue
        if trial.id in taken:
            trial.id = max(taken) + 1
        taken.add(trial.id)
        merged.append(trial)
    mine.trials[:] = merged
