"""Terminal escape sequences inside text that comes from elsewhere (a service's log lines): removed, so a
parser sees the words and the panel never writes another program's escape codes to the user's terminal.
SGLang prints its deprecation warnings in bold yellow; a line could as well set the window title or clear
the screen."""

from __future__ import annotations

import re

__all__ = ["strip_escapes"]

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
