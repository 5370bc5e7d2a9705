"""A journal line's display text, as every view shows it: local time, an optional node tag, the message
without terminal escape codes (a decode line's figures in columns), and the rule line of a marker or gap.

Here, below the loop, because the journal's parsing child (`loop.journal_child`) formats lines on its own core
and must not load the panel to do it; the panel's colouring of these lines is `ui.widgets.journal_lines`."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import DecodeRecord
from specdec_tui.core.terminal_codes import terminal_safe

MARKER_RULE = "────"
DECODE_COLUMNS = "Decode │"  # how a decode line in columns begins (after its rank tags)


class JournalEntry(Protocol):
    """What a line's text is made of (`hosts.base.JournalRecord` has it; core cannot import hosts)."""

    @property
    def timestamp(self) -> datetime: ...
    @property
    def message(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def node(self) -> str | None: ...


def format_record(record: JournalEntry, parsed: object | None = None) -> str:
    """One display line: local time, then the message without terminal escape codes (markers and gaps as a
    rule line). What is shown is also what the filter searches and a selection copies.

    `parsed`: the message already parsed (the journal worker parses every line on its thread), so a decode
    line is not parsed a second time here; without it a decode line is parsed for its columns."""
    if record.kind in ("gap", "marker"):
        return marker_line(record.message or "journal gap: reconnected", record.timestamp)
    tag = f"[{record.node}] " if record.node else ""  # a cluster's journal: which node said it
    message = terminal_safe(record.message)  # the words the service coloured, not its codes or controls
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


def marker_line(text: str, when: datetime | None = None) -> str:
    when = when or datetime.now()
    return f"{MARKER_RULE} {when:%H:%M:%S} {text} {MARKER_RULE}"
