"""Terminal escape sequences and control characters inside text that comes from elsewhere (a service's log
lines, a unit file's comments and values, a session's labels): removed, so a parser sees the words and nothing
another program wrote ever reaches the user's terminal as a command. SGLang prints its deprecation warnings in
bold yellow; a line could as well set the window title, clear the screen or write the clipboard (OSC 52).

`terminal_safe` is THE sanitiser for every output of outside text (the panel applies it to every line it draws,
the headless commands to every table cell and line they print); `strip_escapes` is its first half, for parsers
that only need the words."""

from __future__ import annotations

import re

__all__ = ["strip_escapes", "terminal_safe"]

# ECMA-48: CSI (colours, cursor moves, erasing), OSC (window title, hyperlinks, clipboard) up to BEL or ST,
# DCS / SOS / PM / APC strings up to ST, and the two- and three-character escapes (ESC c, ESC 7, ESC ( B).
# A CSI cut off before its final character (a truncated line) goes whole; a lone ESC, or one that starts none
# of these, is removed by itself.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~])?"
)


def strip_escapes(text: str) -> str:
    """`text` without its terminal escape sequences (the same string when it has none)."""
    return _ESCAPE_SEQUENCE.sub("", text) if "\x1b" in text else text


# The 8-bit forms: CSI (0x9b) and DCS / SOS / OSC / PM / APC strings up to ST (0x9c) or BEL.
_C1_SEQUENCE = re.compile(r"\x9b[0-?]*[ -/]*[@-~]?|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?")
# What is left to remove: C0 controls but tab and newline (NUL, BEL, BS, CR, SO/SI, ESC...), DEL and C1; and
# Unicode's bidirectional embeddings, overrides and isolates and the Arabic letter mark ("Trojan Source"): in a
# terminal that does bidi, U+202E turns the rest of a line around, so a value could read as another.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` as words only: no escape sequence (7- or 8-bit), no control character but tab and newline, no bidi
    control.
    The same string when there is nothing to remove."""
    if text.isprintable() or _CONTROL.search(text) is None:  # isprintable: the common case, in C
        return text
    return _CONTROL.sub("", _C1_SEQUENCE.sub("", strip_escapes(text)))
