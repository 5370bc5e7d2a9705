"""Locating keys in config TOML text, so an error can name the line that defines (or should define) a key."""

from __future__ import annotations

import re

_BARE_OR_QUOTED = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
_DOTTED = rf"{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*"
# Patterns are kept as text and compiled by `re` on first use (its cache): this module loads before the panel's
# first frame, and they serve only a config error's line number.
_HEADER_LINE = rf"^\s*\[\[?\s*(?P<key>{_DOTTED})\s*\]\]?"
_KEY_LINE = rf"^\s*(?P<key>{_DOTTED})\s*="


def split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(_BARE_OR_QUOTED, key)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def scan_keys(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, full key path) for every table header and key/value line."""
    found: list[tuple[int, tuple[str, ...]]] = []
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(_HEADER_LINE, line)
        if header:
            table = split_dotted(header["key"])
            found.append((number, table))
            continue
        key = re.match(_KEY_LINE, line)
        if key:
            found.append((number, table + split_dotted(key["key"])))
    return found


def find_line(text: str, path: tuple[str, ...]) -> int | None:
    """The line that defines `path`, else the line of its longest defined prefix."""
    best_line, best_len = None, 0
    for number, key in scan_keys(text):
        if len(key) > best_len and path[: len(key)] == key:
            best_line, best_len = number, len(key)
    return best_line


def key_at_line(text: str, line: int) -> str:
    keys = [key for number, key in scan_keys(text) if number <= line]
    return ".".join(keys[-1]) if keys else ""
