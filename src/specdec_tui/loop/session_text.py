"""A session file's text kept as pieces between saves, so a save costs what changed (issue 34).

`SessionText` holds the file's header and one `[[trials]]` table per trial, encoded, with the trial's part of the
cache beside it (`core.session_cache.IndexedPart`); a save makes again only the tables of trials whose mark
(`marks`) moved, and the file and its cache are written from the pieces as they are — no whole text joined or
encoded. At 1,000 trials (a 5.8 MB file) the writer thread held the GIL ~20 ms a save (the text encoded, two
fingerprints a trial in Python, every profile and index row serialised again for the cache); the panel's keys
waited for it in the middle of a sweep."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from operator import attrgetter
from pathlib import Path

from specdec_tui.core.session import SCHEMA_VERSION, Session, Trial, _has_carriage_return, _tidy, _trial_doc
from specdec_tui.core.session_cache import CachedSession, IndexedPart, indexed_part, read_cached, trial_part
from specdec_tui.core.session_merge import disk_stamp

# What can change in a trial once made (the loop fills a running one; an operator may label or note one), read
# in C: a mark is a tuple of these and the count of its levels; two marks compare equal by identity first.
_FIELDS = attrgetter("id", "status", "levels", "failure", "notes", "label", "facts", "pushed_at", "host", "unit_text",
                     "profile", "replay_of")
_LEVELS = attrgetter("levels")
Mark = tuple[tuple[object, ...], int]


def marks(trials: Sequence[Trial]) -> list[Mark]:
    """Each trial's mark (`_FIELDS`, its level count), made in C: ~0.3 µs a trial where a Python function made a
    tuple of eleven fields in ~2 µs, twice a save (the snapshot and the text) at every level of a sweep."""
    return list(zip(map(_FIELDS, trials), map(len, map(_LEVELS, trials)), strict=True))


def mark(trial: Trial) -> Mark:
    return _FIELDS(trial), len(trial.levels)


_TABLE = "\n[[trials]]\n"  # where a trial's table starts in a session file (`dumps_session`, `SessionText`)
Kept = tuple[Mark, bytes, IndexedPart | None]  # a trial's mark, its table (a newline before it), its cache part


def _tables(text: str) -> list[str]:
    """The `[[trials]]` tables of a session file's text, cut out by string search (C speed), in order."""
    starts: list[int] = []
    at = text.find(_TABLE)
    while at != -1:
        starts.append(at)
        at = text.find(_TABLE, at + 1)
    ends = [*starts[1:], len(text)] if starts else []  # a session of no trials has no table (not one ending the file)
    return [text[begin + 1:end] for begin, end in zip(starts, ends, strict=True)]


def _is_table_of(table: str, trial: Trial) -> bool:
    return table.startswith(f"[[trials]]\nid = {trial.id}\n") and (
        not trial.uid or f'\nuid = "{trial.uid}"\n' in table)


def _part_of(cached: CachedSession | None, n: int) -> IndexedPart | None:
    return indexed_part(cached.part(n)) if cached is not None else None


class SessionText:
    """`dumps_session`'s text, made from a header and one kept `[[trials]]` table per trial; beside each table
    the trial's part of the cache, so the cache follows every save too (without it the next `session show` or
    panel start read the whole TOML: 13 s at 10,000 trials)."""

    HEADER = "# specdec-tui session: one [[trials]] entry per configuration tried\n"

    def __init__(self) -> None:
        self._trials: dict[int, Kept] = {}
        self.head: dict[str, object] = {}  # the session's own fields, as the last `pieces` wrote them
        self.parts: list[IndexedPart] | None = None  # each trial's cache part, as the last `pieces` wrote them

    def pieces(self, session: Session) -> list[bytes]:
        """The file's bytes in pieces, in order: the header and the session's fields, then each trial's table."""
        import tomli_w

        doc: dict[str, object] = {"schema_version": SCHEMA_VERSION, "created": session.created,
                                  "host": session.host, "unit": session.unit}
        if session.notes:
            doc["notes"] = session.notes
        doc["profile"] = _tidy(asdict(session.profile))
        out = [(self.HEADER + tomli_w.dumps(doc, multiline_strings=not _has_carriage_return(doc))).encode()]
        kept: dict[int, Kept] = {}
        cache: list[IndexedPart] | None = []
        was = self._trials.get
        for trial, now in zip(session.trials, marks(session.trials), strict=True):
            cached = was(trial.id)
            if cached is None or cached[0] != now:
                cached = (now, *self._made(trial))
                time.sleep(0)  # the GIL to the panel's loop between trials (a first save of 1,000 trials held it ~1 s)
            kept[trial.id] = cached
            out.append(cached[1])
            if cache is not None and cached[2] is not None:
                cache.append(cached[2])
            else:
                cache = None
        self._trials = kept
        self.head, self.parts = doc, cache
        return out

    @staticmethod
    def _made(trial: Trial) -> tuple[bytes, IndexedPart | None]:
        import tomli_w

        trial_doc = _trial_doc(trial)
        table = {"trials": [trial_doc]}
        try:
            part = indexed_part(trial_part(trial_doc))
        except TypeError:
            part = None  # a value JSON cannot hold: this session has no cache
        return ("\n" + tomli_w.dumps(table, multiline_strings=not _has_carriage_return(table))).encode(), part

    def dumps(self, session: Session) -> str:
        """The file's text (`pieces` joined)."""
        return b"".join(self.pieces(session)).decode()

    @property
    def has_tables(self) -> bool:
        return bool(self._trials)

    def adopt(self, text: str, session: Session, cached: CachedSession | None = None) -> bool:
        """Keep the `[[trials]]` tables of `text`, the file `session` was read from and has not changed since, as its
        trials' tables: cut out of the text (C-speed string search), not made again; and their cache parts from
        `cached`, that file's cache. False (nothing kept) when the tables do not line up one for one with the
        session's first trials, by count and by id/uid."""
        tables = _tables(text)
        if not tables or len(tables) > len(session.trials):
            return False  # also a unit text holding a line "[[trials]]": the file is made as usual
        held = session.trials[:len(tables)]  # the file's; a trial begun since it was read follows them
        if not all(_is_table_of(table, trial) for table, trial in zip(tables, held, strict=True)):
            return False
        if cached is not None and len(cached.index) != len(tables):
            cached = None
        self._trials = {trial.id: (mark(trial), ("\n" + table).encode(), _part_of(cached, n))
                        for n, (table, trial) in enumerate(zip(tables, held, strict=True))}
        return True

    def adopt_merged(self, session: Session, path: Path, disk: Session) -> None:
        """After a merge of another writer's save (`disk`: the session the file held, just read and merged into
        `session`): take the file's own table (and cache part) for each trial equal to the file's, instead of making
        it again — 10,000 of them were ~10 s with the file's lock held (issue 36). The file's trials must be the
        session's first ones, table by table, else nothing is taken."""
        stamp = disk_stamp(path)
        if disk.disk_stamp != stamp:
            return
        try:
            tables = _tables(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return
        if len(tables) != len(disk.trials) or len(tables) > len(session.trials):
            return
        cached = read_cached(path, stamp)
        if cached is not None and len(cached.index) != len(tables):
            cached = None
        kept: dict[int, Kept] = {}
        for n, (table, trial) in enumerate(zip(tables, session.trials, strict=False)):
            if not _is_table_of(table, trial):
                return
            if disk.trials[n] is trial or disk.trials[n] == trial:
                kept[trial.id] = (mark(trial), ("\n" + table).encode(), _part_of(cached, n))
        self._trials = {**self._trials, **kept}
