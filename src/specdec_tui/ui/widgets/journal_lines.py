"""How one journal line is coloured in the panel: its SGLang kind, whether it is the panel's own probe, and which
styles colour which columns of it. Its text (`format_record`, `marker_line`) is `core.sglang.journal_text`'s."""

from __future__ import annotations

import re
from functools import lru_cache

from specdec_tui.core.sglang.journal_text import DECODE_COLUMNS, MARKER_RULE
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import AccessRecord

_TIME_PREFIX_LEN = len("14:03:07 ")
# What the panel itself asks a server (loop/health, loop/fleet, bench/server_stats): their access lines are its own.
PROBE_PATHS = frozenset({"/health", "/health_generate", "/v1/models", "/server_info", "/get_server_info", "/metrics"})


@lru_cache(maxsize=4096)
def line_kind(message: str) -> str:
    """The SGLang kind of a message (decode/prefill/error/…), via the shared log parser.

    Cached because the same visible lines are re-highlighted on every repaint.
    """
    if message.startswith(MARKER_RULE):
        return "marker"
    # fast path for the bulk of a busy log (same kinds the parser gives them), sparing a full parse
    if "] Decode batch" in message or DECODE_COLUMNS in message:
        return "decode"
    if "] Prefill batch" in message:
        return "prefill"
    try:
        return str(parse_line(message).kind)
    except Exception:  # a parser bug must never take the journal down
        return "text"


def is_panel_probe(line: str) -> bool:
    """True for a display line that is an access line of a GET the panel itself makes (health, models, server
    info, metrics): the journal pane folds these so the server's own lines stay on screen. Not cached: under a
    flood every line is new, and the cache's bookkeeping cost more than the substring test that rejects them."""
    if '"GET /' not in line:
        return False
    record = parse_line(line[_TIME_PREFIX_LEN:])
    return (isinstance(record, AccessRecord) and record.method == "GET"
            and record.path.split("?", 1)[0] in PROBE_PATHS)


_NUMBER_RE = re.compile(
    r"(?:accept len|accept rate|gen throughput \(token/s\)|#running-req|#queue-req|token usage|running|queue|gen): *([\d.]+)"
)


WHOLE_LINE_KINDS = frozenset({"decode", "prefill", "error", "ready", "startup_summary", "access"})
Run = tuple[int, tuple[str, ...]]  # (end column, the component styles laid on it, in order: a later one wins)


def line_runs(plain: str, kind: str | None) -> list[Run]:
    """A display line cut into runs, each with the component styles ("journal--<name>") that colour it: the line's
    SGLang kind over the whole line, a decode/prefill line's figures over that, the time prefix on top.
    `kind`: the line's kind if known (else it is read from the line)."""
    end = len(plain)
    if plain.startswith(MARKER_RULE):
        return [(end, ("marker",))]
    kind = kind or line_kind(plain[_TIME_PREFIX_LEN:])
    layer: tuple[str, ...] = (kind,) if kind in WHOLE_LINE_KINDS else ()
    pos = min(end, _TIME_PREFIX_LEN - 1)
    runs: list[Run] = [(pos, (*layer, "time"))] if pos else []
    if kind in ("decode", "prefill"):
        for match in _NUMBER_RE.finditer(plain, pos):
            start, stop = match.span(1)
            if start > pos:
                runs.append((start, layer))
            runs.append((stop, (*layer, "number")))
            pos = stop
    if pos < end:
        runs.append((end, layer))
    return runs

