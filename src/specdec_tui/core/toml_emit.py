"""A small, fast TOML writer for files whose shape the program controls (the session file).

Why not tomlkit: it builds a style-preserving document, which costs ~2 s for a 200-trial session —
and the session is saved after every benchmark level. Reading uses the stdlib `tomllib`. This writer
handles what sessions hold: str, int, float, bool, datetime, lists and (inline) tables.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_NEEDS_ESCAPE_MULTILINE = re.compile(r'["\\\x00-\x08\x0b-\x1f\x7f]')  # newline and tab stay literal


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else string(name)


def string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def multiline_string(text: str) -> str:
    """A multi-line basic string; the newline after the opening quotes is dropped by every reader."""
    return '"""\n' + _NEEDS_ESCAPE_MULTILINE.sub(_escape_char, text) + '"""'


def value(item: Any) -> str:
    """One TOML value, nested tables written inline."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if math.isnan(item) or math.isinf(item):
            raise ValueError("TOML for a session has no NaN or infinity")
        text = repr(item)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(item, str):
        return string(item)
    if isinstance(item, datetime):
        return item.isoformat().replace("+00:00", "Z")
    if isinstance(item, (date, time)):
        return item.isoformat()
    if isinstance(item, dict):
        return "{" + ", ".join(f"{key(str(k))} = {value(v)}" for k, v in item.items()) + "}" if item else "{}"
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise TypeError(f"cannot write {type(item).__name__} as TOML")


class TomlWriter:
    """Appends lines: key/value pairs, [tables] and [[arrays of tables]]; `text()` joins them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def comment(self, text: str) -> None:
        self.lines.append(f"# {text}")

    def pair(self, name: str, item: Any, *, multiline: bool = False) -> None:
        rendered = multiline_string(item) if multiline and isinstance(item, str) and "\n" in item else value(item)
        self.lines.append(f"{key(name)} = {rendered}")

    def pairs(self, items: dict[str, Any]) -> None:
        for name, item in items.items():
            self.pair(name, item)

    def table(self, header: str, items: dict[str, Any] | None = None, *, array: bool = False) -> None:
        self.lines.append("")
        self.lines.append(f"[[{header}]]" if array else f"[{header}]")
        if items:
            self.pairs(items)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
