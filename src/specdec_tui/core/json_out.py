"""JSON for a terminal or a pipe (`--json` outputs, `session export --json`): orjson's text with every control
character escaped. JSON escapes C0 controls itself, but writes DEL and the C1 controls (U+0080-U+009F: 8-bit CSI,
OSC, DCS...) raw inside strings, and a journal line, a unit's text or a session label is outside text
(core.terminal_codes). Escaped, it stays the same data for a JSON reader and is inert on a terminal."""

from __future__ import annotations

import re

import orjson

__all__ = ["json_bytes", "json_text"]

# In UTF-8, DEL is the byte 0x7f and U+0080-U+009F are 0xc2 followed by 0x80-0x9f; 0xc2 never continues a
# character, so these bytes are those characters and nothing else. JSON's own syntax is ASCII: they are in strings.
_RAW_CONTROL = re.compile(rb"\x7f|\xc2[\x80-\x9f]")


def _escaped(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


def json_bytes(value: object, *, indent: bool = False, non_str_keys: bool = False) -> bytes:
    """`value` as JSON (orjson's types: dataclasses, datetimes...), with no raw control character in it."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_NON_STR_KEYS if non_str_keys else 0)
    return _RAW_CONTROL.sub(_escaped, orjson.dumps(value, option=option))


def json_text(value: object, *, indent: bool = False, non_str_keys: bool = False) -> str:
    """`json_bytes` as text, for `print`."""
    return json_bytes(value, indent=indent, non_str_keys=non_str_keys).decode()
