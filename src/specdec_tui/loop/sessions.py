"""The saved sessions a user can open: each file summarised as a row (host, trials, best c=1 tok/s), newest
first, and a session opened for browsing with its problem in words when it does not load."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from specdec_tui.core.compare import best_of, shown_label
from specdec_tui.core.session import Session, SessionError, load_session
from specdec_tui.core.session_index import load_listing


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
    """One row, from the session's index (`core.session_index.load_listing`): no trial is read whole to list it."""
    try:
        index = load_listing(path)
    except SessionError as err:
        return SessionSummary(path=path, problem=str(err))
    best = best_of(index.headlines, 1)
    level = best.level(1) if best else None
    return SessionSummary(
        path=path, created=index.header.created, host=index.header.host, unit=index.header.unit,
        trials=len(index.headlines), best_c1_tok_s=level.output_tok_s if level else None,
        best_c1_trial=shown_label(best) if best else "",
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
