"""The journal worker's feed: lines batched by size and time, parsed and folded off the UI loop, stats
handed over at a bounded rate with the last numbers never held back."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest
from textual import events

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.journal_feed import batched, parsed_batches

DECODE = ("[2025-03-01 14:00:00 TP0] Decode batch, #running-req: 7, #token: 900, token usage: 0.12, accept len: 2.75, "
          "accept rate: 0.69, cuda graph: True, gen throughput (token/s): 812.40, #queue-req: 2, ")
ACCESS = 'INFO:     127.0.0.1:40000 - "POST /v1/completions HTTP/1.1" 200 OK'


def rec(i: int, message: str = ACCESS, kind: str = "line") -> JournalRecord:
    return JournalRecord(cursor=str(i), timestamp=datetime(2025, 3, 1, 14, 0, 0), message=message, kind=kind)


async def burst(n: int, message: str = ACCESS):
    for i in range(n):
        yield rec(i, message)


async def collect(it) -> list:
    return [item async for item in it]


async def test_a_burst_is_cut_into_full_batches_in_order() -> None:
    batches = await collect(batched(burst(1200), max_lines=500))
    assert [len(b) for b in batches] == [500, 500, 200]
    assert [r.cursor for b in batches for r in b] == [str(i) for i in range(1200)]


async def test_a_source_with_many_records_at_hand_is_read_in_slices_with_the_event_loop_free_between_them() -> None:
    """Issue 16: a source that never suspends (a pipe's buffer full of lines) was read whole before anything else
    ran on the loop; keys and frames waited 35-50 ms per 5,000 records."""
    from specdec_tui.loop.journal_feed import READ_SLICE

    produced = 0
    seen: list[int] = []  # records the source had handed over, each time the loop ran something else

    async def at_hand(n: int):
        nonlocal produced
        for i in range(n):
            produced += 1
            yield rec(i)

    async def ticker() -> None:
        while True:
            seen.append(produced)
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        batches = await collect(batched(at_hand(10_000), max_lines=500, max_buffered=20_000))
    finally:
        task.cancel()
    assert [r.cursor for b in batches for r in b] == [str(i) for i in range(10_000)]
    steps = [b - a for a, b in zip(seen, seen[1:], strict=False)]
    assert max(steps) <= READ_SLICE  # never more than a slice of records between two turns of the loop


async def test_a_quiet_journal_yields_ticks_and_a_late_line_still_arrives() -> None:
    release = asyncio.Event()

    async def quiet_then_one():
        await release.wait()
        yield rec(1)

    out: list[list[JournalRecord]] = []
    async for batch in batched(quiet_then_one(), idle_s=0.01):
        out.append(batch)
        if batch == []:
            release.set()
    assert out[0] == [] and [r.cursor for b in out for r in b] == ["1"]


async def test_a_failing_source_delivers_what_came_before_then_raises() -> None:
    async def breaks():
        yield rec(1)
        raise HostError("journal lost", "reconnect")

    got: list[str] = []
    with pytest.raises(HostError, match="journal lost"):
        async for batch in batched(breaks()):
            got.extend(r.cursor for r in batch)
    assert got == ["1"]


async def test_batches_carry_kinds_and_stats_folded_from_every_line() -> None:
    async def mixed():
        yield rec(1, DECODE)
        yield rec(2, ACCESS)
        yield rec(3, "reconnected", kind="gap")

    batches = await collect(parsed_batches(mixed()))
    assert [k for b in batches for k in b.kinds] == ["decode", "access", "marker"]
    stats = [b.stats for b in batches if b.stats is not None][-1]
    assert stats.accept_len == pytest.approx(2.75) and stats.running_req == 7 and stats.decode_lines == 1


async def test_stats_are_rate_limited_but_the_last_numbers_are_sent() -> None:
    now = [0.0]  # a clock the test moves: no sleeps
    gate = asyncio.Event()

    async def two_bursts():
        for i in range(3):
            yield rec(i, DECODE)
        await gate.wait()  # the feed goes quiet: an idle tick must carry the unsent stats
        yield rec(9, DECODE.replace("accept len: 2.75", "accept len: 3.50"))
        await asyncio.Event().wait()  # and stays open, as a followed journal does

    sent = []
    async for batch in parsed_batches(two_bursts(), stats_every_s=10.0, clock=lambda: now[0]):
        if batch.stats is not None:
            sent.append(batch.stats.accept_len)
        if batch.records and batch.records[-1].cursor == "2":
            gate.set()
        if len(sent) == 2:
            break
    # first batch: stats due (never sent); the 3.50 batch comes within 10 s of it, so only its idle tick sends it
    assert sent == [pytest.approx(2.75), pytest.approx(3.50)]


async def test_the_last_stats_are_sent_when_the_journal_ends() -> None:
    batches = await collect(parsed_batches(burst(600, DECODE), stats_every_s=10.0, clock=lambda: 0.0))
    assert sum(len(b.records) for b in batches) == 600  # two batches: only the first was due for stats
    assert batches[-1].stats is not None and batches[-1].stats.decode_lines == 600


async def test_a_consumer_that_falls_behind_pauses_the_reader_and_loses_no_line() -> None:
    """Issue 16: drop nothing. A slow consumer holds the reader back (the lines wait in the journal) instead of
    the oldest being dropped behind a "N lines skipped" gap, as the feed did before."""
    read = 0

    async def counted(n: int):
        nonlocal read
        for i in range(n):
            read += 1
            yield rec(i)

    got: list[JournalRecord] = []
    ahead: list[int] = []
    async for batch in batched(counted(50_000), max_lines=500, max_buffered=1_000):
        got.extend(batch)
        ahead.append(read - len(got))
        await asyncio.sleep(0)  # the consumer is slow: the reader runs between its batches
    assert [r.cursor for r in got] == [str(i) for i in range(50_000)]
    assert all(r.kind == "line" for r in got)
    assert max(ahead) <= 1_001  # never more than the buffer (plus the one record in the reader's hand) ahead


async def test_batches_carry_the_display_lines_made_on_the_worker() -> None:
    shown = await collect(parsed_batches(burst(3, DECODE), display=lambda r, parsed: f"{r.cursor}:{type(parsed).__name__}"))
    assert [line for b in shown for line in b.lines] == ["0:DecodeRecord", "1:DecodeRecord", "2:DecodeRecord"]


async def test_a_consumer_that_keeps_up_sees_no_gap() -> None:
    batches = await collect(batched(burst(3_000), max_lines=500, max_buffered=3_000))
    assert all(r.kind == "line" for b in batches for r in b)
    assert sum(len(b) for b in batches) == 3_000


async def test_a_big_batch_is_parsed_in_slices_with_the_event_loop_free_between_them() -> None:
    """Issue 16: a key waits at most one slice of parsing. The feed parsed each batch on a worker thread, which
    held the GIL against the UI loop (a tab switch under 20,000 lines/s waited 200-300 ms); the loop now runs
    between slices of FOLD_SLICE lines."""
    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.loop.journal_feed import FOLD_SLICE, fold_in_slices

    stats = LogStats()
    seen: list[int] = []  # lines folded so far, each time the loop ran something else
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            seen.append(stats.decode_lines)
            await asyncio.sleep(0)

    records = [rec(i, DECODE) for i in range(2_000)]
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    kinds, _ = await fold_in_slices(records, stats, None)
    done.set()
    await task
    assert kinds == ["decode"] * 2_000 and stats.decode_lines == 2_000
    steps = [b - a for a, b in zip(seen, seen[1:], strict=False)]
    assert max(steps) <= FOLD_SLICE and len(set(seen)) >= 2_000 // FOLD_SLICE


async def test_parsing_stops_between_slices_while_a_key_is_on_its_way() -> None:
    """Issue 16: with the panel's pause (`InputInOrder.quiet`), no slice is parsed while a key travels through the
    widgets; parsing resumes once it has been handled, and every line is still folded."""
    from specdec_tui.core.sglang.stats import LogStats
    from specdec_tui.loop.journal_feed import FOLD_SLICE, fold_in_slices
    from specdec_tui.ui.input_order import InputInOrder

    class Stop:
        """A widget's message queue, run by hand: what the key's follower queued there."""

        def __init__(self) -> None:
            self.queued: list[tuple[Any, tuple[Any, ...]]] = []

        def call_later(self, callback: Any, *args: Any) -> bool:
            self.queued.append((callback, args))
            return True

        async def run(self) -> None:
            queued, self.queued = self.queued, []
            for callback, args in queued:
                await callback(*args)

    app_queue = Stop()
    order = InputInOrder(deliver=lambda event: asyncio.sleep(0), schedule=lambda delay, callback: None,  # type: ignore[arg-type,return-value]
                         call_later=lambda callback: app_queue.call_later(callback))
    stats = LogStats()
    parsing = asyncio.create_task(fold_in_slices([rec(i, DECODE) for i in range(1_000)], stats, None, order.quiet))
    while stats.decode_lines < 2 * FOLD_SLICE:
        await asyncio.sleep(0)
    field, app = Stop(), Stop()
    key = events.Key("tab", None)
    await order.sent(key, [field, app])  # type: ignore[list-item]
    for _ in range(20):
        await asyncio.sleep(0)
    held_at = stats.decode_lines
    assert held_at < 1_000 and held_at % FOLD_SLICE == 0, "parsing went on while the key was on its way"
    while field.queued or app.queued:
        await field.run()
        await app.run()
    await app_queue.run()
    kinds, _ = await parsing
    assert stats.decode_lines == 1_000 and kinds == ["decode"] * 1_000
