"""The prefixes before an SGLang message: journald/syslog, then `[YYYY-MM-DD HH:MM:SS DP0 TP0 EP0] `, the level.

Removed once per line before any rule looks at the message, so each rule sees the same text whatever
wrote the line (journalctl, a syslog file, SGLang's own stdout)."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from specdec_tui.core.terminal_codes import terminal_safe

_SYSLOG_SHORT = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [^\s:\[]+(?:\[\d+\])?: ")
_SYSLOG_ISO = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:Z|[+-]\d{2}:?\d{2})? \S+ [^\s:\[]+(?:\[\d+\])?: "
)
_SGLANG_PREFIX = re.compile(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)(?P<tags>(?:\s+[A-Z][A-Z_]*\s?\d+)*)\s*\]\s?"
)
_TAG = re.compile(r"([A-Z][A-Z_]*)\s?(\d+)")
_OLD_INNER_TAG = re.compile(r"^\[(?:gpu=(?P<gpu>\d+)|TP ?(?P<tp>\d+))\]\s*")
_LEVEL = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::\s*|\s+)")
# `[2026-02-14 02:10:40] WARNING server_args.py:2341: Spec v2 is …`: the logger's file:line after the level
_SOURCE = re.compile(r"^[\w.-]+\.py:\d+:\s*")


@lru_cache(maxsize=4096)  # a flood repeats the same second thousands of times; strptime is slow
def _parse_timestamp(text: str) -> datetime | None:
    text = text.replace("T", " ").replace(",", ".")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


@lru_cache(maxsize=256)
def _tag_dict(tags_text: str) -> dict[str, int]:
    """`" DP0 TP0 EP0"` → {"DP": 0, "TP": 0, "EP": 0}; cached (a server has few distinct rank prefixes), so the
    caller copies it: each record's tags are its own."""
    return {name: int(num) for name, num in _TAG.findall(tags_text)}


_LEVEL_HEADS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL")

# The text up to a line's first "]" → its (timestamp, tags) when `_SGLANG_PREFIX` reads it there, else None. A server
# writes the same `[date time DP0 TP0]` on every line of a second, and the regex's match up to that "]" depends on
# nothing after it (neither the timestamp nor the tags can hold a "]"); only its optional space does.
_STAMP_CACHE_SIZE = 4096
_STAMP_MAX = 96
_STAMPS: dict[str, tuple[datetime | None, dict[str, int]] | None] = {}


def _sglang_stamp(text: str) -> tuple[int, datetime | None, dict[str, int]] | None:
    """(end, timestamp, tags) of `_SGLANG_PREFIX`'s match at the start of `text`, or None; the tags are the caller's."""
    close = text.find("]")
    if close < 0:
        return None  # the prefix ends with one
    head = text[: close + 1]
    if head in _STAMPS:
        known = _STAMPS[head]
    else:
        match = _SGLANG_PREFIX.match(head)
        known = None if match is None else (_parse_timestamp(match["ts"]), _tag_dict(match["tags"]))
        if close <= _STAMP_MAX:  # a stamp is ~20-50 characters: a long head (some other bracket) is not kept
            if len(_STAMPS) >= _STAMP_CACHE_SIZE:
                _STAMPS.clear()
            _STAMPS[head] = known
    if known is None:
        return None
    end = close + 2 if text[close + 1 : close + 2].isspace() else close + 1  # `\s?` after the "]"
    return end, known[0], known[1].copy()


def strip_prefixes(line: str) -> tuple[str, datetime | None, dict[str, int], str | None]:
    """Returns (message, timestamp, tags, level) with every known prefix removed.

    Each regex runs only when the line's first character can start its match (cheap rejects)."""
    # words only: no escape, no control (CR, BEL, C1...); a printable line (the common case) has none, nor a newline
    text = line if line.isprintable() else terminal_safe(line).rstrip("\n")
    timestamp: datetime | None = None
    tags: dict[str, int] = {}
    level: str | None = None
    first = text[:1]
    if first.isdecimal():  # the same characters as the regexes' `\d`
        match = _SYSLOG_ISO.match(text)
        if match:
            timestamp = _parse_timestamp(match["ts"])
            text = text[match.end() :]
            first = text[:1]
    elif "A" <= first <= "Z":
        match = _SYSLOG_SHORT.match(text)
        if match:
            text = text[match.end() :]
            first = text[:1]
    if first == "[" or first.isdecimal():
        stamp = _sglang_stamp(text)
        if stamp is not None:
            end, stamped, tags = stamp
            timestamp = stamped or timestamp
            text = text[end:]
    if text.startswith("["):
        match = _OLD_INNER_TAG.match(text)
        if match:
            tags.setdefault("GPU" if match["gpu"] is not None else "TP", int(match["gpu"] or match["tp"]))
            text = text[match.end() :]
    match = _LEVEL.match(text) if text.startswith(_LEVEL_HEADS) else None
    if match:
        level = "WARNING" if match["level"] == "WARN" else match["level"]
        text = text[match.end() :]
        source = _SOURCE.match(text) if ".py:" in text else None
        if source:
            text = text[source.end() :]
    return text.strip(), timestamp, tags, level


