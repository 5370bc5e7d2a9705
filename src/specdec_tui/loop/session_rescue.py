"""The last resort for a session whose file cannot be written when the process ends (disk full, its directory gone
or read-only, and still so after the saver's retries): its newest state goes to another file, and the operator is
told in words which file failed, why, and where the trials are now. No finished trial is lost with the process."""

from __future__ import annotations

import contextlib
import copy
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.core.paths import data_dir
from specdec_tui.core.session import Session, SessionError, save_session

if TYPE_CHECKING:
    from specdec_tui.loop.session_saver import SessionSaver


def failure_words(path: Path, err: OSError) -> str:
    """A failed write in words: what failed, what to do (a directory replaced by a file said "File exists")."""
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        why = f"{parent} is not a directory (a file has its name)"
    else:
        why = str(err.strerror or err) + (f" ({err.filename})" if err.filename and str(err.filename) != str(path) else "")
    return (f"could not save session {path}: {why} — check the directory exists and is writable (the session is "
            "kept in memory and saved as soon as it can be)")


def rescue_folders() -> tuple[Path, ...]:
    """Where a rescue copy goes, first that can be written: the data dir's `rescued/`, else the temp dir."""
    return data_dir() / "rescued", Path(tempfile.gettempdir()) / "specdec-tui-rescued"


def rescue_copy(path: Path, session: Session, folders: tuple[Path, ...] = ()) -> Path | None:
    """`session` written as `save_session` does under the name of `path` in the first of `folders` (default
    `rescue_folders()`) that takes it; the path written, None if none did."""
    for folder in folders or rescue_folders():
        target = folder / path.name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            save_session(copy.copy(session), target)
        except (OSError, SessionError):
            continue
        return target
    return None


def rescue_words(path: Path, session: Session | None, failure: str, folders: tuple[Path, ...] = ()) -> str:
    """What the operator reads after the process ended: the failure, where the trials are, what to do."""
    what = failure.split(" (the session is kept")[0]
    rescued = rescue_copy(path, session, folders) if session is not None else None
    if rescued is not None:
        return (f"{what}; its trials were saved to {rescued} instead: copy that file to {path} once the directory "
                f"is writable (`specdec-tui session show {rescued}` reads it where it is)")
    return f"{what}; its newest trials could not be saved anywhere (the data and temp directories refused them too)"


def flush_or_rescue(savers: Sequence[SessionSaver], timeout_s: float) -> list[str]:
    """Wait (at most `timeout_s` in all) for each saver's newest snapshot to be written; one whose file refuses it
    is not waited for: its session goes to a rescue copy. What was not saved where it belongs, in words."""
    deadline = time.monotonic() + timeout_s
    said = []
    for saver in savers:
        with contextlib.suppress(SessionError):  # a failure is `failing`, said below
            saver.take_deferred()  # a `save_soon` of the frame the process ended in
        while not saver.idle and not saver.failing and time.monotonic() < deadline:
            time.sleep(0.05)
        if saver.failing and (saver.rescued is None or saver.rescued is not saver.latest):  # each snapshot said once
            said.append(rescue_words(saver.path, saver.latest, saver.failing, saver.rescue_to))
            saver.rescued = saver.latest
    return said
