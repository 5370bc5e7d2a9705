"""How one journal line looks in the panel: its SGLang kind (for colour), the time-prefixed display text (a
decode line's figures in columns), the rule line of a marker or gap, whether a line is the panel's own probe,
and which styles colour which columns of a line (by its kind)."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import AccessRecord, DecodeRecord
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts.base import JournalRecord

MARKER_RULE = "────"
_TIME_PREFIX_LEN = len("14:03:07 ")
DECODE_COLUMNS = "Decode │"  # how a decode line in columns begins (after its rank tags)
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


def format_record(record: JournalRecord, parsed: object | None = None) -> str:
    """One display line: local time, then the message without terminal escape codes (markers and gaps as a
    rule line). What is shown is also what the filter searches and a selection copies.

    `parsed`: the message already parsed (the journal worker parses every line on its thread), so a decode
    line is not parsed a second time here; without it a decode line is parsed for its columns."""
    if record.kind in ("gap", "marker"):
        return marker_line(record.message or "journal gap: reconnected", record.timestamp)
    tag = f"[{record.node}] " if record.node else ""  # a cluster's journal: which node said it
    message = terminal_safe(record.message)  # the words the service coloured, not its codes
    if isinstance(parsed, DecodeRecord):
        message = decode_columns(message, parsed)
    elif parsed is None and "Decode batch" in message:
        message = decode_columns(message)
    t = record.timestamp  # not `:%H:%M:%S`: strftime was a third of formatting a line under a flood
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d} {tag}{message}"


def decode_columns(message: str, parsed: DecodeRecord | None = None) -> str:
    """A decode line's figures in fixed columns, the ones an operator reads first (running, queue, accept len,
    gen throughput, token usage), so they fit 80 columns instead of being cut after SGLang's 200-character line.
    Any other line (or one the parser does not read as decode) stays as it is."""
    record = parsed if parsed is not None else parse_line(message)
    if not isinstance(record, DecodeRecord):
        return message
    tags = " ".join(f"{k}{v}" for k, v in record.tags.items())
    cells = [
        f"running: {_num(record.running_req, 3)}",
        f"queue: {_num(record.queue_req, 3)}",
        f"accept len: {_num(record.accept_len, 4, '.2f')}",
        f"gen: {_num(record.gen_throughput, 6, '.1f')} tok/s",
        f"token usage: {_num(record.token_usage, 4, '.2f')}",
    ]
    if record.accept_rate is not None:
        cells.append(f"accept rate: {record.accept_rate:.2f}")
    if record.cuda_graph is not None:
        cells.append(f"cuda graph: {record.cuda_graph}")
    return f"{tags + ' ' if tags else ''}{DECODE_COLUMNS} " + " │ ".join(cells)


def _num(value: float | None, width: int, spec: str = "") -> str:
    return f"{'-' if value is None else format(value, spec):>{width}}"


def is_panel_probe(line: str) -> bool:
    """True for a display line that is an access line of a GET the panel itself makes (health, models, server
    info, metrics): the journal pane folds these so the server's own lines stay on screen. Not cached: under a
    flood every line is new, and the cache's bookkeeping cost more than the substring test that rejects them."""
    if '"GET /' not in line:
        return False
    record = parse_line(line[_TIME_PREFIX_LEN:])
    return (isinstance(record, AccessRecord) and record.method == "GET"
            and record.path.split("?", 1)[0] in PROBE_PATHS)


def marker_line(text: str, when: datetime | None = None) -> str:
    when = when or datetime.now()
    return f"{MARKER_RULE} {when:%H:%M:%S} {text} {MARKER_RULE}"


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
