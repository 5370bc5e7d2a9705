"""The journal parsed in a child process (issue 16): every record comes back once, in order, with the kinds, the
display lines and the stats the panel's own in-process parsing gives; a child that dies is said in words; where no
child can start, the same batches come from this process."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import sys
from datetime import datetime

import pytest

from specdec_tui.core.sglang.journal_text import format_record
from specdec_tui.hosts.base import JournalRecord
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop import journal_offload
from specdec_tui.loop.journal_child import as_fields
from specdec_tui.loop.journal_feed import parsed_batches
from specdec_tui.loop.journal_offload import JournalParserError, offloaded_batches

DECODE = ("[2026-12-03 14:00:{s:02d} TP0] Decode batch, #running-req: {run}, #token: 900, token usage: 0.12, "
          "accept len: 2.75, accept rate: 0.69, cuda graph: True, gen throughput (token/s): {gen}.40, #queue-req: 2, ")
ACCESS = 'INFO:     127.0.0.1:40000 - "POST /v1/completions HTTP/1.1" 200 OK'
ERROR = "[2026-12-03 14:00:59 TP0] Scheduler hit an exception: RuntimeError: CUDA error: out of memory"


def journal(n: int) -> list[JournalRecord]:
    records = []
    for i in range(n):
        message = DECODE.format(s=i % 60, run=i % 30, gen=700 + i % 300) if i % 3 else ACCESS
        records.append(JournalRecord(cursor=f"c{i}", timestamp=datetime(2026, 12, 3, 14, 0, i % 60), message=message,
                                     node="n1" if i % 7 == 0 else None))
    records.append(JournalRecord(cursor="m", timestamp=datetime(2026, 12, 3, 14, 1), message="restart requested",
                                 kind="marker"))
    records.append(JournalRecord(cursor="e", timestamp=datetime(2026, 12, 3, 14, 1), message=ERROR))
    return records


async def source(records: list[JournalRecord]):
    for record in records:
        yield record


async def gather(batches) -> tuple[list[JournalRecord], list[str], list[str], object]:
    records, kinds, lines, stats = [], [], [], None
    async for batch in batches:
        records.extend(batch.records)
        kinds.extend(batch.kinds)
        lines.extend(batch.lines)
        stats = batch.stats or stats
    return records, kinds, lines, stats


async def test_the_child_gives_back_every_record_in_order_as_the_panel_would_parse_it() -> None:
    records = journal(5_000)
    there = await gather(offloaded_batches(source(records)))
    here = await gather(parsed_batches(source(records), display=format_record))
    assert there[0] == records  # the very records, once each, in order
    assert there[1:3] == here[1:3]  # kinds and display lines
    assert there[3] == here[3] and there[3].decode_lines == 3_333  # the stats folded from every line
    assert "out of memory" in there[2][-1] and "restart requested" in there[2][-2]


def spy_on_children(monkeypatch) -> list:
    """The parsing children started from now on (their `Process`), as `offloaded_batches` starts them."""
    started: list = []
    real = journal_offload.start_child

    async def start():
        child = await real()
        started.append(child)
        return child

    monkeypatch.setattr(journal_offload, "start_child", start)
    return started


async def test_a_child_that_dies_is_said_in_words(monkeypatch) -> None:
    started = spy_on_children(monkeypatch)

    async def endless():
        i = 0
        while True:
            yield journal(1)[0]
            i += 1
            if i % 100 == 0:
                await asyncio.sleep(0.01)

    with pytest.raises(JournalParserError) as raised:
        async for _ in offloaded_batches(endless()):
            started[0].kill()
    assert str(raised.value) == "the journal parser stopped (exit code -9); start the panel again to follow the journal"


async def test_stopping_the_reader_stops_the_child(monkeypatch) -> None:
    started = spy_on_children(monkeypatch)
    batches = offloaded_batches(source(journal(3_000)))
    await anext(batches)
    await batches.aclose()  # the journal worker cancelled: a host switch, the panel quitting
    assert started[0].returncode is not None


async def test_a_child_that_cannot_start_leaves_the_parsing_to_this_process(monkeypatch) -> None:
    """An interpreter that exits before the child says READY (here /bin/false): the same batches, parsed here."""
    started = spy_on_children(monkeypatch)
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    records = journal(300)
    got = await gather(offloaded_batches(source(records)))
    assert started == [None]
    assert got[0] == records and got[2] == (await gather(parsed_batches(source(records), display=format_record)))[2]


def test_records_travel_as_their_fields_in_the_dataclass_order() -> None:
    record = journal(1)[0]
    assert as_fields(record) == tuple(getattr(record, f.name) for f in dataclasses.fields(JournalRecord))
    assert JournalRecord(*as_fields(record)) == record


async def test_the_journal_failing_is_raised_after_what_came_before() -> None:
    async def breaks():
        for record in journal(20):
            yield record
        raise HostError("journal lost", "reconnect")

    got: list[JournalRecord] = []
    with pytest.raises(HostError, match="journal lost"):
        async for batch in offloaded_batches(breaks()):
            got.extend(batch.records)
    assert got == journal(20)
