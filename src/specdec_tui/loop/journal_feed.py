"""Journal records → parsed batches, folded into `LogStats`, in slices that leave the UI loop free.

A busy SGLang server logs thousands of lines a second. One message per line, each parsed on the
event loop, took ~30% of a core from the UI; so lines are gathered for a short window (or until a
batch is full), parsed, folded and formatted FOLD_SLICE lines at a time with a yield to the event loop
between slices, and handed over as one batch. Not on a worker thread: parsing is pure Python, so a thread
only took the GIL from the UI loop, and each time the loop gave it up (every select) it waited up to
Python's 5 ms switch interval to get it back. A tab switch under a 20,000 lines/s flood crossed dozens of
those waits (p99 200-300 ms); in slices, a key waits at most one slice (~1.5 ms). No Textual here: the app's
journal worker drives this and posts the results as messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import JournalRecord

BATCH_WINDOW_S = 0.05  # a line waits at most this long before it is handed over
BATCH_MAX_LINES = 500
IDLE_TICK_S = 0.2  # with no lines for this long, an empty batch lets the caller flush what it holds (once per quiet spell)
# Lines read but not yet handed over. When parsing falls behind, the reader stops reading until there is
# room: the lines wait in the journal (a file, or journalctl's pipe over SSH), none is dropped, and
# memory stays bounded.
BUFFER_MAX_LINES = 20_000
FOLD_SLICE = 100  # lines parsed between two yields to the event loop (~1.5 ms)
# Records taken from the source between two yields to the event loop: a source with many records at hand (a
# journalctl pipe's buffer over SSH, a local journal's read) hands them over without suspending, and reading
# them all in one go held keys and frames back (35-50 ms per 5,000 records on 2 cores).
READ_SLICE = 500


async def batched(
    source: AsyncIterator[JournalRecord],
    *,
    window_s: float = BATCH_WINDOW_S,
    max_lines: int = BATCH_MAX_LINES,
    idle_s: float = IDLE_TICK_S,
    max_buffered: int = BUFFER_MAX_LINES,
) -> AsyncIterator[list[JournalRecord]]:
    """Lists of records: each one as soon as it is full or `window_s` after its first record.

    Yields [] once `idle_s` after the last batch (a tick), and no more until records come: a quiet journal
    does not wake an idle panel five times a second. The source is read by its own task, so a slow
    consumer never cancels a read half-way (which would close a journal follower). At most
    `max_buffered` records wait; then the reader pauses until the consumer takes a batch (nothing dropped).
    """
    limit = max(max_buffered, max_lines)
    buffer: deque[JournalRecord] = deque()
    has_data, full, room = asyncio.Event(), asyncio.Event(), asyncio.Event()
    room.set()
    ended = False
    failure: BaseException | None = None

    async def pump() -> None:
        nonlocal ended, failure
        taken = 0
        try:
            async for record in source:
                taken += 1
                if taken % READ_SLICE == 0:
                    await asyncio.sleep(0)
                if len(buffer) >= limit:
                    room.clear()
                    await room.wait()
                buffer.append(record)
                has_data.set()
                if len(buffer) >= max_lines:
                    full.set()
        except Exception as err:  # noqa: BLE001 - handed to the consumer, which says it in words
            failure = err
        finally:
            ended = True
            has_data.set()
            full.set()

    reader = asyncio.create_task(pump())
    ticked = False  # a tick went out since the last batch: wait for records without one
    try:
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(has_data.wait(), None if ticked else idle_s)
            if not buffer and not ended:
                ticked = True
                yield []
                continue
            ticked = False
            if not ended and len(buffer) < max_lines:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(full.wait(), window_s)
            batch = [buffer.popleft() for _ in range(min(max_lines, len(buffer)))]
            room.set()
            if not buffer and not ended:
                has_data.clear()
            if len(buffer) < max_lines and not ended:
                full.clear()
            if batch:
                yield batch
            if ended and not buffer:
                if failure is not None:
                    raise failure
                return
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader


def kind_of(record: JournalRecord) -> tuple[str, object | None]:
    """The record's kind for display and its parsed form (None for markers/gaps or unparsable lines)."""
    if record.kind != "line":
        return "marker", None
    try:
        parsed = parse_line(record.message)
    except Exception:  # noqa: BLE001 - a parser bug must never take the journal down
        return "text", None
    return str(parsed.kind), parsed


# How the caller shows a record, given its parsed form (None when unparsed): run with the parse, in the
# feed's slices, so the pane neither parses nor formats a line.
Display = Callable[[JournalRecord, object | None], str]


def fold(records: list[JournalRecord], stats: LogStats, display: Display | None = None) -> tuple[list[str], list[str]]:
    """Parse `records`, fold them into `stats` (in place); each record's kind, and its display line when
    `display` is given (else no lines).

    `stats` is folded in place: the UI reads `snapshot`s of it, never the original."""
    kinds: list[str] = []
    lines: list[str] = []
    for record in records:
        kind, parsed = kind_of(record)
        if parsed is not None:
            stats.update(parsed)  # type: ignore[arg-type]
        kinds.append(kind)
        if display is not None:
            lines.append(display(record, parsed))
    return kinds, lines


# Awaited between two slices: by default one turn of the event loop; the panel passes one that also waits while
# a key is on its way through its widgets (`ui.input_order`), so a flood's parsing never slows a key down.
Pause = Callable[[], Awaitable[None]]


async def next_turn() -> None:
    await asyncio.sleep(0)


async def fold_in_slices(records: list[JournalRecord], stats: LogStats,
                         display: Display | None, pause: Pause = next_turn) -> tuple[list[str], list[str]]:
    """`fold` on the event loop, FOLD_SLICE records at a time with a `pause` between slices."""
    kinds: list[str] = []
    lines: list[str] = []
    for start in range(0, len(records), FOLD_SLICE):
        more_kinds, more_lines = fold(records[start:start + FOLD_SLICE], stats, display)
        kinds.extend(more_kinds)
        lines.extend(more_lines)
        await pause()
    return kinds, lines


def snapshot(stats: LogStats) -> LogStats:
    """A copy the UI may keep while the worker goes on folding into the original."""
    return dataclasses.replace(stats, adjustments=list(stats.adjustments))


@dataclass(slots=True)
class ParsedBatch:
    """One hand-over: the records, their kinds, their display lines (when a `display` was given), and the
    stats if they are due for a redraw."""

    records: list[JournalRecord]
    kinds: list[str]
    stats: LogStats | None
    lines: list[str] = dataclasses.field(default_factory=list)


async def parsed_batches(
    source: AsyncIterator[JournalRecord], *, stats_every_s: float = 0.2, clock: Callable[[], float] | None = None,
    display: Display | None = None, pause: Pause = next_turn,
) -> AsyncIterator[ParsedBatch]:
    """Batches of `source`, parsed (and shown by `display`) in slices; stats ride along at most every
    `stats_every_s`.

    Stats that changed but were not sent yet go out with the next idle tick, so the last numbers
    are never held back."""
    loop = asyncio.get_running_loop()
    now = clock or loop.time
    stats = LogStats()
    sent_at = float("-inf")
    unsent = False
    async for records in batched(source):
        kinds, lines = await fold_in_slices(records, stats, display, pause) if records else ([], [])
        unsent = unsent or bool(records)
        due = unsent and (now() - sent_at >= stats_every_s or not records)
        if due:
            sent_at, unsent = now(), False
        if records or due:
            yield ParsedBatch(records, kinds, snapshot(stats) if due else None, lines)
    if unsent:  # the journal ended (or the host went away): the last numbers still count
        yield ParsedBatch([], [], snapshot(stats))
