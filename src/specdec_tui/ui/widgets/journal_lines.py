"""How one journal line looks in the panel: its SGLang kind (for colour), the time-prefixed display text, the
rule line of a marker or gap, and the highlighter that colours a line by its kind."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache

from rich.highlighter import Highlighter
from rich.text import Text

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.hosts.base import JournalRecord

MARKER_RULE = "────"
_TIME_PREFIX_LEN = len("14:03:07 ")


@lru_cache(maxsize=4096)
def line_kind(message: str) -> str:
    """The SGLang kind of a message (decode/prefill/error/…), via the shared log parser.

    Cached because the same visible lines are re-highlighted on every repaint.
    """
    if message.startswith(MARKER_RULE):
        return "marker"
    # fast path for the bulk of a busy log (same kinds the parser gives them), sparing a full parse
    if "] Decode batch" in message:
        return "decode"
    if "] Prefill batch" in message:
        return "prefill"
    try:
        return str(parse_line(message).kind)
    except Exception:  # a parser bug must never take the journal down
        return "text"


def format_record(record: JournalRecord) -> str:
    """One display line: local time, then the message (markers and gaps as a rule line)."""
    if record.kind in ("gap", "marker"):
        return marker_line(record.message or "journal gap: reconnected", record.timestamp)
    tag = f"[{record.node}] " if record.node else ""  # a cluster's journal: which node said it
    return f"{record.timestamp:%H:%M:%S} {tag}{record.message}"


def marker_line(text: str, when: datetime | None = None) -> str:
    when = when or datetime.now()
    return f"{MARKER_RULE} {when:%H:%M:%S} {text} {MARKER_RULE}"


_NUMBER_RE = re.compile(
    r"(?:accept len|accept rate|gen throughput \(token/s\)|#running-req|#queue-req|token usage): ([\d.]+)"
)


class JournalHighlighter(Highlighter):
    """Colours a line by its SGLang kind; styles come from the log's component classes (theme-aware)."""

    def __init__(self, style_for: Callable[[str], object], known_kind: Callable[[str], str | None] = lambda _: None) -> None:
        self._style_for = style_for
        self._known_kind = known_kind

    def highlight(self, text: Text) -> None:
        plain = text.plain
        if plain.startswith(MARKER_RULE):
            text.stylize(self._style_for("marker"))
            return
        kind = self._known_kind(plain) or line_kind(plain[_TIME_PREFIX_LEN:])
        if kind in ("decode", "prefill"):
            text.stylize(self._style_for(kind))
            for match in _NUMBER_RE.finditer(plain):
                text.stylize(self._style_for("number"), match.start(1), match.end(1))
        elif kind in ("error", "ready", "startup_summary", "access"):
            text.stylize(self._style_for(kind))
        text.stylize(self._style_for("time"), 0, min(len(plain), _TIME_PREFIX_LEN - 1))
