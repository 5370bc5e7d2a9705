"""A session as the views that summarise every trial read it (`session show`, `session list`): the session's own
fields, a headline of each trial (id, label, status, settings, sweep tag, tok/s per level), and whole trials only
for the positions asked for. From the cache (`core.session_cache`) that is its first line and those trials' lines:
a 10,000-trial `session show` built ~300,000 result objects to list 200 trials (issue 36)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import (
    Session,
    SessionError,
    Trial,
    load_session,
    profile_from_doc,
    session_doc,
    session_from_doc,
    trial_from_doc,
)
from specdec_tui.core.session_cache import CachedSession, index_of, read_cached, read_first, read_first_and_last
from specdec_tui.core.session_merge import disk_stamp
from specdec_tui.core.trial_writer import interrupted


@dataclass(frozen=True, slots=True)
class LevelHeadline:
    concurrency: int
    output_tok_s: float


@dataclass(frozen=True, slots=True)
class TrialHeadline:
    """What a summary of every trial reads of one: `best_by_concurrency` and `trial_label` take it as a trial."""

    id: int
    status: str
    label: str
    profile: BenchProfile
    levels: tuple[LevelHeadline, ...] = ()
    replay_of: int | None = None
    sweep: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, str | None] = field(default_factory=dict)  # only for a sweep trial without a sweep id

    def level(self, concurrency: int) -> LevelHeadline | None:
        return next((lv for lv in self.levels if lv.concurrency == concurrency), None)


@dataclass(slots=True)
class SessionIndex:
    """`header`: the session without its trials; `headlines`: every trial's, in order; `trials(positions)`: those
    trials whole."""

    path: Path
    header: Session
    headlines: list[TrialHeadline]
    _fetch: Callable[[Sequence[int]], list[Trial]]

    def trials(self, positions: Sequence[int]) -> list[Trial]:
        return self._fetch(positions)


def load_index(path: Path) -> SessionIndex:
    """The index of the session file at `path`, from its cache when that is the TOML's own (else the TOML is read,
    which writes the cache). Raises SessionError (only), in words, as `load_session` does."""
    cached = read_cached(path, disk_stamp(path))
    if cached is not None:
        try:
            return _from_cache(path, cached)
        except (SessionError, KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
            pass  # a cache that does not read as it should: the TOML decides
    session = load_session(path)
    cached = read_cached(path, session.disk_stamp)
    if cached is not None:
        try:
            return _from_cache(path, cached)
        except (SessionError, KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
            pass
    return index_of_session(session, path)


def load_listing(path: Path) -> SessionIndex:
    """`load_index` for a list of sessions (`session list`, the panel's `o`): the session's fields and every
    trial's headline from the cache's first line alone, no trial's line read or parsed (20 sessions of 1,000
    trials each were read whole to show one row each: bench/session_list.py). Without a cache of this very file
    the TOML is read, as `load_index` does (and the cache written for the next list). Raises SessionError."""
    cached = read_first(path, disk_stamp(path))
    if cached is not None:
        try:
            return _from_cache(path, cached)
        except (SessionError, KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
            pass  # a first line that does not read as it should: the TOML decides
    return load_index(path)


def index_of_session(session: Session, path: Path) -> SessionIndex:
    """The index of a session in memory (one whose cache could not be written: its trials are all here)."""
    profiles, rows = index_of(session_doc(session))
    known = [profile_from_doc(p, str(path)) for p in profiles]
    header = Session(host=session.host, unit=session.unit, profile=session.profile, created=session.created,
                     notes=session.notes)
    return SessionIndex(path, header, [_headline(row, known) for row in rows],
                        lambda positions: [session.trials[i] for i in positions])


def _from_cache(path: Path, cached: CachedSession) -> SessionIndex:
    source = str(path)
    header = session_from_doc({**cached.head, "trials": []}, source)
    profiles = [profile_from_doc(p, source) for p in cached.profiles]
    headlines = [_headline(row, profiles) for row in cached.index]

    def fetch(positions: Sequence[int]) -> list[Trial]:
        docs = cached.trial_docs(positions)
        with contextlib.suppress(SessionError):  # a line that is no trial: as a damaged one, the TOML decides
            if docs is not None:
                return [trial_from_doc(doc, f"{source}: trial #{i + 1}") for i, doc in zip(positions, docs, strict=True)]
        whole = load_session(path)  # a damaged line: the TOML is the record
        return [whole.trials[i] for i in positions]

    return SessionIndex(path, header, headlines, fetch)


def _headline(row: dict[str, Any], profiles: list[BenchProfile]) -> TrialHeadline:
    levels = tuple(LevelHeadline(int(c), float(v)) for c, v in row.get("lv", []))
    replay_of = row.get("replay_of")
    status = "cancelled" if interrupted(str(row.get("status", "ok")), str(row.get("writer", ""))) else None
    return TrialHeadline(id=int(row["id"]), status=status or str(row.get("status", "ok")), label=str(row.get("label", "")),
                         profile=profiles[int(row["p"])], levels=levels,
                         replay_of=None if replay_of is None else int(replay_of), sweep=dict(row.get("sweep", {})),
                         flags={str(k): (None if v is True else str(v)) for k, v in dict(row.get("flags", {})).items()})


def read_head(path: Path) -> tuple[Session, int] | None:
    """The session at `path` with only its newest trial, and how many it holds, from its cache alone (None without
    a cache of this very file): what the panel opens with, its other trials loaded after its first frame. The
    session is marked as never read (no disk stamp), so a save before they are in merges the file first and never
    writes this part over the whole."""
    cached = read_first_and_last(path, disk_stamp(path))
    if cached is None or len(cached.index) < 2:
        return None  # no cache of this file, or no other trial to load later: the file is read as it is
    try:
        session = session_from_doc({**cached.head, "trials": []}, str(path))
        count = len(cached.index)
        docs = cached.trial_docs([count - 1])
        if docs is None:
            return None
        session.add_read(trial_from_doc(docs[0], f"{path}: trial #{count}"), docs[0])
    except SessionError:
        return None
    return session, count
