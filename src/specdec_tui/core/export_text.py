"""Text from outside (a session's labels, host and unit names, flag values, failure words) as it goes into an
export someone else opens: words only, never markup. The HTML report escapes it (`html_text`); a Markdown
viewer renders raw HTML and links too, so `md_text` escapes what opens them; and the JSON export, which keeps
everything, writes the characters that turn a line around or hide (bidi controls, DEL, C1) as `\\uXXXX` escapes:
the same data for a program, nothing a viewer acts on."""

from __future__ import annotations

import re
from html import escape as html_escape

from specdec_tui.core.terminal_codes import terminal_safe

__all__ = ["html_text", "json_inert", "md_code", "md_text"]


def html_text(text: str) -> str:
    """Text for an HTML page: words only (no escape code, NUL, CR or bidi override), HTML-escaped."""
    return html_escape(terminal_safe(text))


_MD_ACTIVE = re.compile(r"([\\`*\[\]<>&|!~])")  # what opens emphasis, a link or image, raw HTML, an entity, a cell


def md_text(text: str) -> str:
    """Text for Markdown prose or a table cell, on one line: shown as written, never as HTML, a link or a cell."""
    return _MD_ACTIVE.sub(r"\\\1", terminal_safe(text)).replace("\n", " ")


def md_code(text: str) -> str:
    """`text` as one Markdown code span: its fence longer than any run of backticks inside, so it cannot close early
    (in a code span `<script>` is shown, not run)."""
    words = terminal_safe(text).replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", words)), default=0) + 1)
    pad = " " if words.startswith("`") or words.endswith("`") else ""
    return f"{fence}{pad}{words}{pad}{fence}"


_HIDDEN = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # JSON writes these raw


def json_inert(json: str) -> str:
    """JSON text with its bidi controls, DEL and C1 characters written as `\\uXXXX` (they can only stand inside a
    string, where the escape means the same character)."""
    return _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", json)
