"""The panel's side of `journal_child`: records go to the parsing child, parsed batches come back, in order.

The parent reads the journal (the host's follower lives here: an SSH channel, the local journal files) and
ships records in small batches; what comes back is one `ParsedBatch` per batch the child made, holding the very
records sent (kept here, in order, until their batch returns). Nothing is dropped: when the child falls behind,
the parent's writes wait, the journal reader waits, and the lines wait in the journal.

When no child starts (it cannot be run, or it exits before saying READY: an interpreter that cannot import
this package the same way), the same batches are parsed on this event loop (`journal_feed.parsed_batches`),
slower under a flood but the same to whoever reads them. A child that dies later stops the journal with the
error in words (`JournalParserError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import cast

from specdec_tui.core.sglang.journal_text import format_record
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.hosts.base import JournalRecord
from specdec_tui.loop.journal_child import READY, as_fields, frame, read_frames
from specdec_tui.loop.journal_feed import ParsedBatch, Pause, batched, next_turn, parsed_batches

SHIP_WINDOW_S = 0.01  # a record waits at most this long here before it goes to the child (the child batches too)
SHIP_MAX_LINES = 1_000
READY_WITHIN_S = 20.0  # a child that has not said READY by then is not used
STDERR_KEPT = 300  # characters of the child's last line (its error), for the message when it dies


class JournalParserError(RuntimeError):
    """The parsing child stopped before the journal ended."""


async def start_child() -> asyncio.subprocess.Process | None:
    """The parsing child once it has said READY, or None when it cannot run or did not (then the caller parses
    in-process)."""
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "specdec_tui.loop.journal_child",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=1 << 22)
    except OSError:
        return None
    assert child.stdout is not None
    frames = read_frames(child.stdout)
    try:
        first = await asyncio.wait_for(anext(frames, None), READY_WITHIN_S)
    except TimeoutError:
        first = None
    if first == READY:
        return child
    await _stop(child)
    return None


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
        with contextlib.suppress(Exception):
            await child.wait()


async def offloaded_batches(source: AsyncIterator[JournalRecord], *, pause: Pause = next_turn) -> AsyncIterator[ParsedBatch]:
    """`journal_feed.parsed_batches(source, display=format_record)`, parsed in a child process. `pause` is for
    the in-process fallback's slices."""
    child = await start_child()
    if child is None:
        async for batch in parsed_batches(source, display=format_record, pause=pause):
            yield batch
        return
    stdin, stdout, stderr = child.stdin, child.stdout, child.stderr
    assert stdin is not None and stdout is not None and stderr is not None
    sent: deque[JournalRecord] = deque()
    failure: list[BaseException] = []

    async def ship() -> None:
        try:
            async for records in batched(source, window_s=SHIP_WINDOW_S, max_lines=SHIP_MAX_LINES):
                if records:
                    sent.extend(records)
                    stdin.write(frame([as_fields(r) for r in records]))
                    await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child died: its end is reported by the reader below
        except Exception as err:  # noqa: BLE001 - the journal's own failure, raised to the reader's caller
            failure.append(err)
        finally:
            with contextlib.suppress(Exception):
                stdin.close()

    shipper = asyncio.create_task(ship())
    try:
        async for payload in read_frames(stdout):
            count, kinds, lines, stats = cast(tuple[int, list[str], list[str], LogStats | None], payload)
            yield ParsedBatch([sent.popleft() for _ in range(count)], kinds, stats, lines)
        code = await child.wait()
        if failure:
            raise failure[0]
        if code != 0 or sent:
            said = (await stderr.read()).decode(errors="replace").strip().splitlines()
            last = said[-1][-STDERR_KEPT:] if said else ""  # the error's own line, not the traceback above it
            raise JournalParserError(f"the journal parser stopped (exit code {code}" + (f": {last}" if last else "")
                                     + "); start the panel again to follow the journal")
    finally:
        shipper.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await shipper
        await _stop(child)
