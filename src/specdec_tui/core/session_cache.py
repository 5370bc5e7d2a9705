"""A session's parsed form beside its TOML (`.<name>.json`): reading 10,000 trials of TOML took the stdlib parser
over 10 s, orjson reads the same document in a fraction of a second. The TOML stays the record (the file a person
reads, edits and copies); the cache is used only while the TOML is byte for byte the one it was written with
(same inode, size and mtime), and any failure to read or write it falls back to the TOML silently.

One JSON line a trial, after a first line holding the session's own fields and an index: a few figures a trial
(`headline_row`), what `session show` and `session list` summarise every trial from. A reader that lists a few
trials parses the first line and those trials' lines only (a 10,000-trial session's whole document took orjson
~0.6 s and building its ~300,000 result objects ~2 s, most of it for trials no one was shown)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.regular_file import open_regular
from specdec_tui.core.session_merge import DiskStamp

CACHE_VERSION = 2
_DATES = ("started_at", "pushed_at")


def cache_path(path: Path) -> Path:
    return path.parent / f".{path.name}.json"


def headline_row(trial: dict[str, Any]) -> dict[str, Any]:
    """What the index keeps of one trial's document: id, label, status, its sweep tag, and (concurrency, output
    tok/s) per level; and the profile it ran with, as a number into the index's profiles (`_numbered`)."""
    row: dict[str, Any] = {"id": trial.get("id"), "status": trial.get("status", "ok"),
                           "lv": [[lv.get("concurrency"), lv.get("output_tok_s", 0.0)] for lv in trial.get("levels", [])
                                  if isinstance(lv, dict)]}
    for key in ("label", "replay_of", "sweep", "writer"):  # writer: only a running trial's (core.trial_writer)
        if key in trial:
            row[key] = trial[key]
    if isinstance(trial.get("sweep"), dict) and not isinstance(trial["sweep"].get("id"), int):
        row["flags"] = trial.get("flags", {})  # a sweep of a file before sweep ids: told apart by its other flags
    return row


def index_of(doc: dict[str, Any]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The distinct profiles the trials ran with (first seen first) and every trial's headline row."""
    return _numbered([(_row(trial), trial.get("profile") if isinstance(trial, dict) else None)
                      for trial in doc.get("trials", [])])


def _row(trial: Any) -> dict[str, Any]:
    return headline_row(trial if isinstance(trial, dict) else {})


def _numbered(rows: list[tuple[dict[str, Any], Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The rows with their profile numbered into the list of distinct profiles, first seen first."""
    profiles: list[Any] = []
    numbers: dict[bytes, int] = {}
    out = []
    import orjson

    for row, profile in rows:
        key = orjson.dumps(profile, option=orjson.OPT_SORT_KEYS)
        if key not in numbers:
            numbers[key] = len(profiles)
            profiles.append(profile)
        out.append({**row, "p": numbers[key]})
    return profiles, out


CachePart = tuple[bytes, dict[str, Any], Any]  # a trial's line, its headline row, its profile


def trial_part(trial: dict[str, Any]) -> CachePart:
    """One trial's document as the cache keeps it: its line, its headline row and its profile (a writer that keeps
    these per trial, `loop.session_saver`, writes the cache of 10,000 trials without making each again); TypeError
    for a value JSON cannot hold."""
    import orjson

    line = orjson.dumps(_dated(trial), option=orjson.OPT_PASSTHROUGH_DATETIME)  # a date-time elsewhere: TypeError
    if b"null" in line:  # NaN or infinity (JSON has neither): kept only in the TOML
        raise TypeError("a value JSON cannot hold")
    return line, _row(trial), trial.get("profile")


def write_cache(path: Path, doc: dict[str, Any], stamp: DiskStamp | None) -> None:
    """Keep `doc` (what the TOML at `path`, as `stamp` says it is now, holds) for the next read."""
    try:
        parts = [trial_part(trial) for trial in doc.get("trials", [])]
    except TypeError:
        return
    write_cache_parts(path, {k: v for k, v in doc.items() if k != "trials"}, parts, stamp)


def _head_fields(head: dict[str, Any]) -> dict[str, Any]:
    """The session's own fields as the cache keeps them (its creation as ISO text); TypeError for an odd value."""
    head = dict(head)
    if not isinstance(head.get("created"), datetime):
        raise TypeError("created is not a date-time")
    head["created"] = head["created"].isoformat()
    return head


def write_cache_parts(path: Path, head: dict[str, Any], parts: Sequence[CachePart],
                      stamp: DiskStamp | None) -> None:
    """`write_cache` from the session's own fields (`head`) and each trial's `trial_part`."""
    if stamp is None:
        return
    import orjson

    try:
        head = _head_fields(head)
        profiles, rows = _numbered([(row, profile) for _, row, profile in parts])
        first = orjson.dumps({"cache": CACHE_VERSION, "stamp": list(stamp), "head": head, "profiles": profiles,
                              "index": rows}, option=orjson.OPT_PASSTHROUGH_DATETIME)
        if b"null" in first:
            return
        write_atomic(cache_path(path), b"\n".join([first, *(line for line, _, _ in parts)]), mode=0o600)
    except (OSError, TypeError):
        pass  # a read-only directory, an odd value: the TOML is read instead


@dataclass(slots=True)
class IndexedPart:
    """A trial's `CachePart` with what the cache's index needs of it serialised once: a writer that keeps these per
    trial (`loop.session_text`) makes the first line of a 1,000-trial cache from bytes, where `write_cache_parts`
    serialised every profile and row again at each save (~3 ms of the GIL a save, issue 34)."""

    line: bytes  # the trial's line, a newline before it
    row: bytes  # its headline row as JSON, without the profile's number
    key: bytes  # its profile as JSON, keys sorted: equal profiles share a number
    profile: Any
    numbered: bytes = b""  # `row` with "p" (its profile's number), as last written
    number: int = -1


def indexed_part(part: CachePart) -> IndexedPart | None:
    """`part` made ready for `write_indexed`; None when a value JSON cannot hold is in it (no cache then)."""
    import orjson

    line, row, profile = part
    try:
        row_json = orjson.dumps(row, option=orjson.OPT_PASSTHROUGH_DATETIME)
        key = orjson.dumps(profile, option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:
        return None
    if b"null" in row_json or b"null" in key or not row_json.endswith(b"}") or row_json == b"{}":
        return None
    return IndexedPart(b"\n" + line, row_json, key, profile)


def write_indexed(path: Path, head: dict[str, Any], parts: Sequence[IndexedPart], stamp: DiskStamp | None) -> None:
    """`write_cache_parts` from parts made ready once (`indexed_part`): the same file, its first line joined from
    each trial's bytes and its lines written as they are (no copy of the whole cache made)."""
    if stamp is None:
        return
    import orjson

    try:
        head = _head_fields(head)
        profiles: list[Any] = []
        numbers: dict[bytes, int] = {}
        rows: list[bytes] = []
        for part in parts:
            number = numbers.get(part.key)
            if number is None:
                number = numbers[part.key] = len(profiles)
                profiles.append(part.profile)
            if part.number != number:
                part.numbered, part.number = b"%s,\"p\":%d}" % (part.row[:-1], number), number
            rows.append(part.numbered)
        top = orjson.dumps({"cache": CACHE_VERSION, "stamp": list(stamp), "head": head, "profiles": profiles},
                           option=orjson.OPT_PASSTHROUGH_DATETIME)
        if b"null" in top:
            return
        first = b"%s,\"index\":[%s]}" % (top[:-1], b",".join(rows))
        write_atomic(cache_path(path), [first, *(part.line for part in parts)], mode=0o600)
    except (OSError, TypeError):
        pass  # a read-only directory, an odd value: the TOML is read instead


@dataclass(slots=True)
class CachedSession:
    """A cache read for exactly the TOML it was written with: the session's own fields, its index, and the
    trials' lines, each parsed only when asked for (`trial_docs`)."""

    head: dict[str, Any]
    profiles: list[Any]
    index: list[dict[str, Any]]
    _data: memoryview  # the file: the trials' lines lie at `_starts` (no copy of 50 MB split into lines)
    _starts: list[int]  # where each trial's line starts, and one past the end of the last

    def trial_docs(self, positions: Sequence[int]) -> list[dict[str, Any]] | None:
        """The documents of the trials at `positions` (0 is the first trial); None if a line is damaged."""
        import orjson

        try:
            docs = [orjson.loads(self._data[self._starts[i]:self._starts[i + 1] - 1]) for i in positions]
            for trial in docs:
                _revive_trial(trial)
        except (orjson.JSONDecodeError, IndexError, TypeError, ValueError, AttributeError):
            return None
        return docs

    def part(self, position: int) -> CachePart:
        """The trial at `position` as `trial_part` made it, taken from this cache."""
        row = self.index[position]
        line = bytes(self._data[self._starts[position]:self._starts[position + 1] - 1])
        return line, row, self.profiles[row["p"]]

    def doc(self) -> dict[str, Any] | None:
        """The whole document, as the TOML parser gives it."""
        trials = self.trial_docs(range(len(self.index)))
        return None if trials is None else {**self.head, "trials": trials}


def _checked_first_line(top: object, stamp: DiskStamp) -> tuple[dict[str, Any], list[Any], list[Any]] | None:
    """The cache's first line (head, profiles, index) when it is this version's and written for `stamp`, the head's
    creation date read back as a date-time; else None. Both readers below take it from here."""
    if not isinstance(top, dict) or top.get("cache") != CACHE_VERSION or top.get("stamp") != list(stamp):
        return None
    head, profiles, index = top.get("head"), top.get("profiles"), top.get("index")
    if not (isinstance(head, dict) and isinstance(profiles, list) and isinstance(index, list)):
        return None
    try:
        if isinstance(head.get("created"), str):
            head["created"] = datetime.fromisoformat(head["created"])
    except ValueError:
        return None
    return head, profiles, index


def read_cached(path: Path, stamp: DiskStamp | None) -> CachedSession | None:
    """The cache of the TOML at `path`, if it was written for exactly that file; else None."""
    if stamp is None:
        return None
    import orjson

    try:
        with open_regular(cache_path(path)) as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            data = f.read()
        view = memoryview(data)
        end = data.find(b"\n")
        top = orjson.loads(view[:end if end >= 0 else len(data)])
    except (OSError, orjson.JSONDecodeError):
        return None
    checked = _checked_first_line(top, stamp)
    if checked is None:
        return None
    head, profiles, index = checked
    starts = []
    while end >= 0:  # every line but the first is a trial's
        starts.append(end + 1)
        end = data.find(b"\n", end + 1)
    starts.append(len(data) + 1)
    if len(starts) - 1 != len(index) or not all(isinstance(row, dict) for row in index):
        return None
    return CachedSession(head, profiles, index, view, starts)


def read_first(path: Path, stamp: DiskStamp | None) -> CachedSession | None:
    """`read_cached` with only the first line read (the session's own fields and its index): what a list of
    sessions shows, no trial's line read; `trial_docs` knows no position."""
    if stamp is None:
        return None
    import orjson

    try:
        with open_regular(cache_path(path)) as f:
            top = orjson.loads(f.readline())
    except (OSError, orjson.JSONDecodeError):
        return None
    return _head_of(top, stamp)


def _head_of(top: Any, stamp: DiskStamp) -> CachedSession | None:
    """The first line's session fields, profiles and index, with no trial's line (None when the line is not the
    cache of this version written for the file `stamp` describes)."""
    checked = _checked_first_line(top, stamp)
    if checked is None or not all(isinstance(row, dict) for row in checked[2]):
        return None
    head, profiles, index = checked
    return CachedSession(head, profiles, index, memoryview(b""), [])


def read_first_and_last(path: Path, stamp: DiskStamp | None) -> CachedSession | None:
    """`read_cached` with only the first line and the newest trial's read (the file's two ends: a panel's start
    reads no more of a 50 MB cache): `trial_docs` knows that last position only."""
    if stamp is None:
        return None
    import orjson

    try:
        with open_regular(cache_path(path)) as f:
            top = orjson.loads(f.readline())
            size = f.seek(0, os.SEEK_END)
            tail, back = b"", 0
            while b"\n" not in tail and back < size:
                back = min(size, back + 65536)
                f.seek(size - back)
                tail = f.read(back)
    except (OSError, orjson.JSONDecodeError):
        return None
    checked = _checked_first_line(top, stamp)
    if checked is None:
        return None
    head, profiles, index = checked
    if not index:
        return CachedSession(head, profiles, index, memoryview(b""), [1])
    last = tail[tail.rfind(b"\n") + 1:]
    starts = [0] * (len(index) - 1) + [0, len(last) + 1]  # only the last trial's line is here
    return CachedSession(head, profiles, index, memoryview(last), starts)


def read_cache(path: Path, stamp: DiskStamp | None) -> dict[str, Any] | None:
    """The document the TOML at `path` holds, if the cache was written for exactly that file; else None."""
    cached = read_cached(path, stamp)
    return None if cached is None else cached.doc()


def _dated(trial: Any) -> Any:
    """A trial's document with its date-times as ISO text; TypeError for one of another type."""
    if not isinstance(trial, dict):
        return trial
    trial = dict(trial)
    for key in _DATES:
        if key in trial:
            if not isinstance(trial[key], datetime):
                raise TypeError(f"{key} is not a date-time")
            trial[key] = trial[key].isoformat()
    return trial


def _revive_trial(trial: Any) -> None:
    """The date-times JSON holds as text, back as the datetimes TOML gives."""
    if isinstance(trial, dict):
        for key in _DATES:
            if isinstance(trial.get(key), str):
                trial[key] = datetime.fromisoformat(trial[key])
