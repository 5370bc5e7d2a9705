"""A session's parsed form beside its TOML (`.<name>.json`): reading 10,000 trials of TOML took the stdlib parser
over 10 s, orjson reads the same document in a fraction of a second. The TOML stays the record (the file a person
reads, edits and copies); the cache is used only while the TOML is byte for byte the one it was written with
(same inode, size and mtime), and any failure to read or write it falls back to the TOML silently."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.session_merge import DiskStamp

CACHE_VERSION = 1
_DATES = ("started_at", "pushed_at")


def cache_path(path: Path) -> Path:
    return path.parent / f".{path.name}.json"


def write_cache(path: Path, doc: dict[str, Any], stamp: DiskStamp | None) -> None:
    """Keep `doc` (what the TOML at `path`, as `stamp` says it is now, holds) for the next read."""
    if stamp is None:
        return
    import orjson

    try:
        data = orjson.dumps({"cache": CACHE_VERSION, "stamp": list(stamp), "doc": _dated(doc)},
                            option=orjson.OPT_PASSTHROUGH_DATETIME)  # a date-time elsewhere: TypeError, no cache
        if b"null" in data:  # NaN or infinity (JSON has neither): kept only in the TOML
            return
        write_atomic(cache_path(path), data, mode=0o600)
    except (OSError, TypeError):
        pass  # a read-only directory, an odd value: the TOML is read instead


def read_cache(path: Path, stamp: DiskStamp | None) -> dict[str, Any] | None:
    """The document the TOML at `path` holds, if the cache was written for exactly that file; else None."""
    if stamp is None:
        return None
    import orjson

    try:
        with open(cache_path(path), "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            data = orjson.loads(f.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("cache") != CACHE_VERSION or data.get("stamp") != list(stamp):
        return None
    doc = data.get("doc")
    if not isinstance(doc, dict):
        return None
    try:
        return _revive(doc)
    except (TypeError, ValueError, AttributeError):
        return None


def _dated(doc: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy with the session's own date-times as ISO text; TypeError for one of another type."""
    out = dict(doc)
    if not isinstance(doc.get("created"), datetime):
        raise TypeError("created is not a date-time")
    out["created"] = doc["created"].isoformat()
    trials = []
    for trial in doc.get("trials", []):
        if isinstance(trial, dict):
            trial = dict(trial)
            for key in _DATES:
                if key in trial:
                    if not isinstance(trial[key], datetime):
                        raise TypeError(f"{key} is not a date-time")
                    trial[key] = trial[key].isoformat()
        trials.append(trial)
    out["trials"] = trials
    return out


def _revive(doc: dict[str, Any]) -> dict[str, Any]:
    """The date-times JSON holds as text, back as the datetimes TOML gives."""
    if isinstance(doc.get("created"), str):
        doc["created"] = datetime.fromisoformat(doc["created"])
    for trial in doc.get("trials", []):
        if isinstance(trial, dict):
            for key in _DATES:
                if isinstance(trial.get(key), str):
                    trial[key] = datetime.fromisoformat(trial[key])
    return doc
