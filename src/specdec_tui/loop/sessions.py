"""The saved sessions a user can open: each file summarised as a row (host, trials, best c=1 tok/s), newest
first, and a session opened for browsing with its problem in words when it does not load."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from specdec_tui.core.compare import best_by_concurrency
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session, SessionError, default_session_path, load_session


class SessionOpenError(ValueError):
    """A saved session cannot be opened; the message says why in words."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One saved session file as a row of the sessions list; `problem` is set when it does not load."""

    path: Path
    created: datetime | None = None
    host: str = ""
    unit: str = ""
    trials: int = 0
    best_c1_tok_s: float | None = None
    best_c1_trial: str = ""
    problem: str = ""


def summarise_session(path: Path) -> SessionSummary:
    try:
        session = load_session(path)
    except SessionError as err:
        return SessionSummary(path=path, problem=str(err))
    best = best_by_concurrency(session, 1)
    level = best.level(1) if best else None
    return SessionSummary(
        path=path, created=session.created, host=session.host, unit=session.unit, trials=len(session.trials),
        best_c1_tok_s=level.output_tok_s if level else None,
        best_c1_trial=(best.label or f"trial {best.id}") if best else "",
    )


def list_sessions(directory: Path) -> list[SessionSummary]:
    """Every `*.toml` in `directory`, newest first (by the session's own start time, else the file's)."""
    if not directory.is_dir():
        return []
    summaries = [summarise_session(p) for p in directory.glob("*.toml") if p.is_file()]

    def newest(s: SessionSummary) -> float:
        return s.created.timestamp() if s.created else s.path.stat().st_mtime

    return sorted(summaries, key=newest, reverse=True)


def open_offline(path: Path) -> Session:
    """A saved session for browsing; raises SessionOpenError with the file's problem in words."""
    try:
        return load_session(path)
    except SessionError as err:
        raise SessionOpenError(str(err)) from None


def current_session_of(host: str, directory: Path) -> Path | None:
    """The session `host` is on: its most recently written session file in `directory`, or None.

    The one place that answers "which session does a start on this host continue" (the panel, its host
    switch, headless `demo` and `sweep`, and the Fleet tab's figures all ask here)."""
    if not directory.is_dir():
        return None
    newest: tuple[float, Path] | None = None
    for path in directory.glob("*.toml"):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if (newest is None or mtime > newest[0]) and _session_host(path) == host:
            newest = (mtime, path)
    return newest[1] if newest else None


def _session_host(path: Path) -> str:
    """The `host = "..."` line near the top of a session file, without parsing the whole file."""
    try:
        with path.open(encoding="utf-8") as f:
            for _, line in zip(range(40), f, strict=False):
                if line.startswith("host = "):
                    return line.split("=", 1)[1].strip().strip('"')
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def continue_or_start(host: str, unit: str, directory: Path, *, new: bool = False,
                      profile: BenchProfile | None = None) -> tuple[Session, Path]:
    """The host's current session and its file, or (`new`, or none yet, or it no longer loads) a fresh one.

    A current session that does not load is not overwritten: the fresh session gets a file of its own."""
    path = None if new else current_session_of(host, directory)
    if path is not None:
        try:
            return load_session(path), path
        except SessionError:
            pass
    fresh = Session(host=host, unit=unit) if profile is None else Session(host=host, unit=unit, profile=profile)
    return fresh, unused_session_path(host, directory)


def unused_session_path(host: str, directory: Path) -> Path:
    """A new session file for `host` in `directory` that no other session already uses (two starts in one second)."""
    stem = default_session_path(host).stem
    path, n = directory / f"{stem}.toml", 2
    while path.exists():
        path, n = directory / f"{stem}-{n}.toml", n + 1
    return path
