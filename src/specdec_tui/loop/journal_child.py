"""The journal's parsing in a child process: records come in on stdin, parsed batches go out on stdout.

Why a process (issue 16): parsing, folding and formatting SGLang lines is pure Python, and under a flood of
20,000 lines a second it took ~40 % of the panel's core (measured with py-spy on a 2-core machine), on the
same event loop that answers keys; a thread would only have taken the GIL from it. In a child the work runs on
the machine's other core, and the panel only reads finished batches (`journal_offload` is the parent's side).

Frames both ways: a 4-byte big-endian length, then a pickle (the two ends are this package, same version).
In: a list of `JournalRecord` field tuples. Out: first READY (the formatter was found), then
`(records taken, kinds, display lines, LogStats or None)` for each batch `journal_feed.parsed_batches` makes,
in order. The display lines are `core.sglang.journal_text.format_record`'s (no formatter is loaded by name: the
child never imports the panel):

    python -m specdec_tui.loop.journal_child
"""

from __future__ import annotations

import asyncio
import pickle
import struct
import sys
from collections.abc import AsyncIterator
from typing import BinaryIO, cast

from specdec_tui.core.sglang.journal_text import format_record
from specdec_tui.hosts.base import JournalRecord
from specdec_tui.loop.journal_feed import parsed_batches

HEADER = struct.Struct(">I")
READY = "ready"  # the child's first frame: it is parsing (a child that cannot start says nothing and exits)
RecordFields = tuple[object, ...]  # JournalRecord's fields, in order


def frame(payload: object) -> bytes:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


async def read_frames(stream: asyncio.StreamReader) -> AsyncIterator[object]:
    """The payloads on `stream`, until it ends (a frame cut short counts as the end)."""
    while True:
        try:
            head = await stream.readexactly(HEADER.size)
            body = await stream.readexactly(HEADER.unpack(head)[0])
        except asyncio.IncompleteReadError:
            return
        yield pickle.loads(body)


def as_fields(record: JournalRecord) -> RecordFields:
    """A record as plain values, in `JournalRecord`'s field order (pickled in C; a slots dataclass pickles through
    Python code). tests/test_journal_offload.py checks the order against the dataclass."""
    return (record.cursor, record.timestamp, record.message, record.priority, record.pid, record.kind, record.node)


async def _records(stream: asyncio.StreamReader) -> AsyncIterator[JournalRecord]:
    async for fields in read_frames(stream):
        for values in cast(list[RecordFields], fields):
            yield JournalRecord(*values)  # type: ignore[arg-type]


async def serve(stdin: asyncio.StreamReader, stdout: BinaryIO) -> None:
    """Parse what comes on `stdin` until it ends; each batch written (and flushed) as soon as it is made."""
    async for batch in parsed_batches(_records(stdin), display=format_record):
        stdout.write(frame((len(batch.records), batch.kinds, batch.lines, batch.stats)))
        stdout.flush()


async def _main() -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=1 << 22)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    sys.stdout.buffer.write(frame(READY))
    sys.stdout.buffer.flush()
    await serve(stdin, sys.stdout.buffer)


def main(argv: list[str]) -> int:
    try:
        asyncio.run(_main())
    except (BrokenPipeError, KeyboardInterrupt):
        return 0  # the panel went away first
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
