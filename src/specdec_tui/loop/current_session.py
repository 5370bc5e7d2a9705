"""Which session a start on a host continues: its most recently written session file, or a fresh one with a
file name of its own. Apart from the saved-sessions list (`loop.sessions`, which summarises trials with
`core.compare`) because every panel start asks this before its first frame."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

from specdec_tui.core import paths
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.regular_file import open_regular
from specdec_tui.core.session import Session, SessionError, load_session, utcnow


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
    try:  # a regular file only: a FIFO named *.toml held every start (SIGTERM too), /dev/zero's one line no end
        with io.TextIOWrapper(open_regular(path), encoding="utf-8") as f:
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
            session = load_session(path)
        except SessionError:
            session = None
        if session is not None and not other_time_scale(session, host):
            return session, path
    fresh = Session(host=host, unit=unit) if profile is None else Session(host=host, unit=unit, profile=profile)
    return fresh, unused_session_path(host, directory)


def other_time_scale(session: Session, host: str) -> str | None:
    """The time scale the demo's trials in `session` ran at when the demo workspace now runs at another (None: the
    same, or not the demo). Why: the workspace keeps the scale of the verb that created it (tune, sweep, replay
    at 25×, demo and the panel at 1×), and trials 25× fast beside real-time ones in one session read as one
    server's figures; a start at another scale begins a session of its own."""
    if host != "demo" or not session.trials:
        return None
    from specdec_tui.hosts.local.workspace import DEMO_UNIT, DemoWorkspace

    now = DemoWorkspace(paths.demo_dir(), session.unit or DEMO_UNIT, 0).time_scale
    for trial in session.trials:
        try:
            ran = float(trial.flags.get("time-scale") or 1.0)
        except ValueError:
            continue
        if ran != now:
            return f"{ran:g}"
    return None


def default_session_path(host: str, when: datetime | None = None) -> Path:
    """A new session file in the data dir, named by host and start time."""
    when = when or utcnow()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in host) or "session"
    return paths.sessions_dir() / f"{when:%Y%m%d-%H%M%S}-{safe}.toml"


def unused_session_path(host: str, directory: Path) -> Path:
    """A new session file for `host` in `directory` that no other session already uses (two starts in one second)."""
    stem = default_session_path(host).stem
    path, n = directory / f"{stem}.toml", 2
    while path.exists():
        path, n = directory / f"{stem}-{n}.toml", n + 1
    return path


def continue_or_start_head(host: str, unit: str, directory: Path, *, new: bool = False,
                           profile: BenchProfile | None = None) -> tuple[Session, Path, int | None]:
    """`continue_or_start` for the panel: the current session with only its newest trial when its cache allows
    (`core.session_index.read_head`), and the number of trials it holds, to load after the first frame; None
    when the session came whole (or fresh)."""
    from specdec_tui.core.session_index import read_head

    path = None if new else current_session_of(host, directory)
    head = read_head(path) if path is not None else None
    if head is not None and path is not None:
        return head[0], path, head[1]
    session, path = continue_or_start(host, unit, directory, new=new, profile=profile)
    return session, path, None
