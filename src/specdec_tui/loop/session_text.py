"""A session file's text kept as pieces between saves, so a save costs what changed (issue 34).

`SessionText` holds the file's header and one `[[trials]]` table per trial, encoded, with the trial's part of the
cache beside it (`core.session_cache.IndexedPart`); a save makes again only the tables of trials whose mark
(`mark`) moved, and the file and its cache are written from the pieces as they are — no whole text joined or
encoded. At 1,000 trials (a 5.8 MB file) the writer thread held the GIL ~20 ms a save (the 5.8 MB text joined and
encoded, every profile and index row of the cache serialised again, the cache's lines joined); the panel's keys
waited for it in the middle of a sweep (issue 34; bench/session_writes.py counts a write)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import cast

from specdec_tui.core.session import SCHEMA_VERSION, Session, Trial, _has_carriage_return, _tidy, _trial_doc
from specdec_tui.core.session_cache import CachedSession, IndexedPart, indexed_part, read_cached, trial_part
from specdec_tui.core.session_merge import disk_stamp
from specdec_tui.core.trial_writer import INTERRUPTED

Mark = tuple[object, ...]


def mark(trial: Trial) -> Mark:
    """What can change in a trial once made (the loop fills a running one; an operator may label or note one), and
    the objects a trial replaced by another of its id (`Session.add`) does not share: its flags and unit text (a
    replaced trial of the same status, levels and length of unit kept the table of the one before it)."""
    return (trial.status, len(trial.levels), trial.failure, trial.notes, trial.label, id(trial.facts),
            trial.pushed_at, trial.host, id(trial.unit_text), id(trial.profile), trial.replay_of, trial.id,
            id(trial.flags), id(trial.sweep), trial.started_at)


def file_mark(trial: Trial) -> Mark:
    """`mark` of a trial whose table is cut out of its file; none that matches for one read as interrupted
    (`core.trial_writer`): its file says "running", so the next save writes it as it is now."""
    return () if trial.failure == INTERRUPTED else mark(trial)


def marks(trials: Sequence[Trial]) -> list[Mark]:
    """Each trial's `mark` (~0.1 ms for 1,000 trials: cheap beside the table a changed trial makes)."""
    return [mark(trial) for trial in trials]


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
        self._last: tuple[list[Trial], list[bytes], list[IndexedPart | None]] | None = None  # (`pieces`, `copies`)

    def pieces(self, session: Session, *, copies: bool = False) -> list[bytes]:
        """The file's bytes in pieces, in order: the header and the session's fields, then each trial's table.
        `copies`: the session's trials are a snapshot's (`session_saver.snapshot`), never changed once taken, so a
        trial at the same place as at the last such call, the same object, is unchanged: only the others are looked
        at (a lookup and a mark a trial were ~1.5 ms of the GIL a save at 1,000 trials)."""
        import tomli_w

        doc: dict[str, object] = {"schema_version": SCHEMA_VERSION, "created": session.created,
                                  "host": session.host, "unit": session.unit}
        if session.notes:
            doc["notes"] = session.notes
        doc["profile"] = _tidy(asdict(session.profile))
        head = (self.HEADER + tomli_w.dumps(doc, multiline_strings=not _has_carriage_return(doc))).encode()
        trials = list(session.trials)
        if copies and self._last is not None:
            last, tables, parts = self._last
            changed = [n for n, (trial, was) in enumerate(zip(trials, last, strict=False)) if trial is not was]
            changed += range(len(last), len(trials))
            tables = tables[:len(trials)] + [b""] * (len(trials) - len(tables))
            parts = parts[:len(trials)] + [None] * (len(trials) - len(parts))
            for n in changed:
                tables[n], parts[n] = self._table(trials[n])
        else:
            self._trials = {trial.id: self._trials[trial.id] for trial in trials if trial.id in self._trials}
            tables, parts = [], []
            for trial in trials:
                table, part = self._table(trial)
                tables.append(table)
                parts.append(part)
        self._last = (trials, tables, parts) if copies else None
        self.head, self.parts = doc, cast("list[IndexedPart]", parts) if all(parts) else None  # all: no call a part
        return [head, *tables]

    def _table(self, trial: Trial) -> tuple[bytes, IndexedPart | None]:
        """`trial`'s table and cache part: kept while its mark is the same, else made (and kept)."""
        now = mark(trial)
        cached = self._trials.get(trial.id)
        if cached is None or cached[0] != now:
            cached = self._trials[trial.id] = (now, *self._made(trial))
            time.sleep(0)  # the GIL to the panel's loop between trials (a first save of 1,000 trials held it ~1 s)
        return cached[1], cached[2]

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
        self._trials = {trial.id: (file_mark(trial), ("\n" + table).encode(), _part_of(cached, n))
                        for n, (table, trial) in enumerate(zip(tables, held, strict=True))}
        self._last = None
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
                kept[trial.id] = (file_mark(trial), ("\n" + table).encode(), _part_of(cached, n))
        self._trials = {**self._trials, **kept}
        self._last = None
