"""Why a session file cannot be read, said about the file (which part, what to do), never in Python's words.

The TOML parser and the trial's builders fail with messages written for a programmer: "'str' object has no
attribute 'get'", "maximum recursion depth exceeded", "use sys.set_int_max_str_digits() to increase the limit".
A user reads them as a crash. Here they become the part of the file at fault and the way out."""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable
from typing import Any

from specdec_tui.core.results import FigureError

__all__ = ["toml_problem", "trial_problem"]

WAY_OUT = "the file is damaged or not a session: restore it from a backup, or fix that part in an editor"
_DEFAULT_DIGITS = 4300  # CPython's default int_max_str_digits


def toml_problem(err: BaseException, text: str) -> str:
    """What stops `text` being read as TOML, in words (a TOMLDecodeError already says where and what)."""
    if isinstance(err, tomllib.TOMLDecodeError):
        return f"not valid TOML: {err}"
    if isinstance(err, RecursionError):
        return f"not readable: its arrays or tables are nested inside one another too deeply; {WAY_OUT}"
    limit = sys.get_int_max_str_digits() or _DEFAULT_DIGITS
    long_number = re.search(rf"[0-9_]{{{limit + 1},}}", text) if isinstance(err, ValueError) else None
    if long_number is not None:
        line = text.count("\n", 0, long_number.start()) + 1
        digits = sum(c.isdigit() for c in long_number.group())
        return (f"not readable: line {line} holds a number {digits:,} digits long (at most {limit:,} are read; "
                f"no session holds one that long); {WAY_OUT}")
    return f"not valid TOML; {WAY_OUT}"


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def trial_problem(d: dict[str, Any], read: Callable[[dict[str, Any]], object]) -> str:
    """Which part of a `[[trials]]` table stops it being read: each key is read alone beside the id (`read`
    builds a trial or raises), and a level's keys beside its concurrency."""
    if "id" not in d:
        return f"it has no `id`; {WAY_OUT}"
    bare = {"id": d["id"]}
    if not _reads(read, bare):
        return f"its `id` is {_kind(d['id'])}, not a whole number; {WAY_OUT}"
    for key, value in d.items():
        if key == "levels" and isinstance(value, list):
            for n, level in enumerate(value, 1):
                if _reads(read, {**bare, "levels": [level]}):
                    continue
                if not isinstance(level, dict):
                    return f"its level {n} is {_kind(level)}, not a table; {WAY_OUT}"
                if "concurrency" not in level:
                    return f"its level {n} has no `concurrency`; {WAY_OUT}"
                base = {"concurrency": level["concurrency"]}
                for key_in_level, v in level.items():
                    err = _read_error(read, {**bare, "levels": [{**base, key_in_level: v}]})
                    if isinstance(err, FigureError):  # already in words: which figure and why
                        return f"its level {n}: {err}; {WAY_OUT}"
                    if err is not None:
                        return f"its level {n} has `{key_in_level}` as {_kind(v)}, which a session does not keep there; {WAY_OUT}"
                return f"its level {n} cannot be read; {WAY_OUT}"
        elif not _reads(read, {**bare, key: value}):
            return f"its `{key}` is {_kind(value)}, which a session does not keep there; {WAY_OUT}"
    return f"its values do not fit together; {WAY_OUT}"


def _reads(read: Callable[[dict[str, Any]], object], part: dict[str, Any]) -> bool:
    return _read_error(read, part) is None


def _read_error(read: Callable[[dict[str, Any]], object], part: dict[str, Any]) -> Exception | None:
    try:
        read(part)
    except Exception as err:  # the caller's own error or a builder's: either way this part does not read
        return err
    return None
