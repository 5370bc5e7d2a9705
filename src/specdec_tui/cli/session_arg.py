"""Which session a command's trials go to: `--session FILE`, else the host's current session, else (or with
`--new-session`) a fresh one. One answer for the panel, `demo`, `sweep` and `bench --record`."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.session import Session, SessionError, load_session


def resolve_session(arg: str | None, host_name: str, unit: str, *, new: bool = False,
                    profile: BenchProfile | None = None) -> tuple[Session, Path]:
    """An existing --session file is continued and a new one started there; without --session, the host's
    current session is continued (a fresh one with `new`, i.e. --new-session, or when the host has none).
    Shared by the panel, `demo`, `sweep` and `bench --record`."""
    if not arg:
        from specdec_tui.loop.current_session import (  # not for `--session FILE` (issue 16, cold start)
            continue_or_start,
            current_session_of,
            other_time_scale,
        )

        session, path = continue_or_start(host_name, unit, sessions_dir(), new=new, profile=profile)
        current = None if new else current_session_of(host_name, sessions_dir())
        if current is not None and current != path:
            try:
                ran = other_time_scale(load_session(current), host_name)
            except SessionError:
                ran = None
            if ran is not None:
                import sys

                print(f"note: the trials of the demo's current session ({current.name}) ran at time scale {ran}, "
                      f"the demo now runs at another: they are not mixed, this starts the session {path.name}",
                      file=sys.stderr)
        return session, path
    path = Path(arg)
    if path.exists():
        try:
            return load_session(path), path
        except SessionError as err:
            raise CliError(str(err)) from None
    return (Session(host=host_name, unit=unit) if profile is None
            else Session(host=host_name, unit=unit, profile=profile)), path


def resolve_panel_session(arg: str | None, host_name: str, unit: str, *,
                          new: bool = False) -> tuple[Session, Path, int | None]:
    """`resolve_session` for the panel: an existing session with only its newest trial when its cache allows, and
    how many trials it holds (the panel loads them after its first frame: issue 36, a 10,000-trial session held
    the first frame for seconds); None when the session came whole."""
    if not arg:
        from specdec_tui.loop.current_session import continue_or_start_head

        return continue_or_start_head(host_name, unit, sessions_dir(), new=new)
    path = Path(arg)
    if path.is_file():
        from specdec_tui.core.session_index import read_head

        head = read_head(path)
        if head is not None:
            return head[0], path, head[1]
    session, path = resolve_session(arg, host_name, unit, new=new)
    return session, path, None
