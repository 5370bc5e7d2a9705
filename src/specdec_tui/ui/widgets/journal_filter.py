"""The journal pane's "/" filter: a case-insensitive substring, or a regex between slashes, made into one matcher;
a bad regex is said in words instead."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LineFilter:
    """A compiled filter: what the user typed (shown on the status line) and the matcher."""

    source: str
    match: Callable[[str], bool]


def compile_filter(pattern: str, *, regex: bool = False) -> LineFilter | str | None:
    """None for "no filter", a `LineFilter`, or an error message in words for a bad regex.

    A pattern wrapped in slashes (/decode.*accept/) is a regex; otherwise a case-insensitive substring.
    """
    if not pattern:
        return None
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        pattern, regex = pattern[1:-1], True
    if not regex:
        needle = pattern.lower()
        return LineFilter(pattern, lambda line: needle in line.lower())
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as err:
        return f"Not a valid regular expression ({err}); showing all lines until it is fixed."
    return LineFilter(f"/{pattern}/", lambda line: compiled.search(line) is not None)
