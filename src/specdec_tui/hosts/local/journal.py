"""The local host's journal: an append-only JSON-lines file plus an in-memory ring.

Why a file: a headless command or a second panel must read (and resume) the same journal, and the
cursor must stay valid across restarts of the service and of the panel, like journald's __CURSOR.
The cursor is the entry's sequence number; writers take an flock so two processes never reuse one.
Followers tail the file (woken at once by in-process appends, else by a poll), so a live record
reaches every reader by the same path and none is lost or repeated. The poll is short while lines
come and slower once the journal has been quiet for a while: an idle panel should not wake ten
times a second to find nothing (an empty poll is one stat of the file).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from pathlib import Path

import orjson

from specdec_tui.hosts.base import JournalKind, JournalRecord
from specdec_tui.hosts.errors import HostError

CURSOR_WIDTH = 12
POLL_INTERVAL_S = 0.1  # other processes' appends (the supervisor's) are seen by polling, this often while lines come
IDLE_POLL_INTERVAL_S = 0.5  # ... and this often once nothing came for QUIET_AFTER_S (the bound on a line's delay then)
QUIET_AFTER_S = 1.0
# A follower reads at most this much at a time, and lets the event loop turn before the next read: one far behind a
# flood (a 64 MB file) holds a bounded number of records in memory, and the loop is never held longer than one
# chunk takes to decode (~700 SGLang lines, a few ms; at 1 MB the panel's keys waited 35-50 ms behind a read).
READ_CHUNK_BYTES = 128 * 1024
DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # ~250,000 SGLang lines per file; the rotated one is kept too


def format_cursor(seq: int) -> str:
    return f"{seq:0{CURSOR_WIDTH}d}"


def parse_cursor(cursor: str) -> int:
    try:
        seq = int(cursor)
    except (TypeError, ValueError):
        raise HostError(
            f"journal cursor {cursor!r} is not a local-host cursor", "drop the cursor and read the last lines"
        ) from None
    if seq < 0:
        raise HostError(f"journal cursor {cursor!r} is negative", "drop the cursor and read the last lines")
    return seq


def _seq_of(record: JournalRecord) -> int:
    return int(record.cursor)


def _last(records: list[JournalRecord], lines: int | None) -> list[JournalRecord]:
    """The last `lines` records (all when None; none for 0, which `records[-0:]` would get wrong)."""
    if lines is None:
        return records
    return records[-lines:] if lines > 0 else []


def _encode(seq: int, record: JournalRecord) -> bytes:
    row = {
        "seq": seq,
        "ts": record.timestamp.isoformat(),
        "msg": record.message,
        "prio": record.priority,
        "pid": record.pid,
        "kind": record.kind,
    }
    return orjson.dumps(row) + b"\n"


def _decode(line: bytes) -> JournalRecord | None:
    """One stored line → record; a torn or foreign line is skipped rather than failing the reader."""
    try:
        row = orjson.loads(line)
        return JournalRecord(
            cursor=format_cursor(int(row["seq"])),
            timestamp=datetime.fromisoformat(row["ts"]),
            message=str(row["msg"]),
            priority=int(row.get("prio", 6)),
            pid=row.get("pid"),
            kind=row.get("kind", "line"),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """Split off complete lines; returns them and how many bytes they span (a partial tail waits)."""
    end = data.rfind(b"\n")
    if end < 0:
        return [], 0
    return data[: end + 1].splitlines(), end + 1


def _read_records(path: Path, offset: int = 0, limit: int | None = None) -> tuple[list[JournalRecord], int, int | None]:
    """Records in `path` from byte `offset`, at most about `limit` bytes of them (a line longer than that is
    still read whole); returns (records, offset after them, inode)."""
    try:
        with open(path, "rb") as fh:
            ino = os.fstat(fh.fileno()).st_ino
            fh.seek(offset)
            data = fh.read(-1 if limit is None else limit)
            lines, used = _complete_lines(data)
            if not used and limit is not None and len(data) == limit:
                lines, used = _complete_lines(data + fh.read())
    except FileNotFoundError:
        return [], 0, None
    records = [rec for rec in map(_decode, lines) if rec is not None]
    return records, offset + used, ino


def _last_seq_in(path: Path) -> int:
    """The newest sequence number in `path`, reading only its tail."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            chunk = 64 * 1024
            while True:
                start = max(0, size - chunk)
                fh.seek(start)
                lines, _ = _complete_lines(fh.read(size - start))
                for line in reversed(lines):
                    rec = _decode(line)
                    if rec is not None:
                        return _seq_of(rec)
                if start == 0:
                    return 0
                chunk *= 4
    except FileNotFoundError:
        return 0


class JournalStore:
    """Append and read journal records for one unit; safe for several processes on one workspace."""

    def __init__(self, path: Path, *, ring_size: int = 5000, max_bytes: int = DEFAULT_MAX_BYTES,
                 poll_s: float = POLL_INTERVAL_S, idle_poll_s: float = IDLE_POLL_INTERVAL_S,
                 quiet_after_s: float = QUIET_AFTER_S) -> None:
        self.path = Path(path)
        self.poll_s, self.idle_poll_s, self.quiet_after_s = poll_s, idle_poll_s, quiet_after_s
        self.polls = 0  # followers' looks at the file for others' appends (tests, the idle bench)
        self.rotated_path = self.path.with_name(f"{self.path.stem}.1{self.path.suffix}")
        self.max_bytes = max_bytes
        self._ring: deque[JournalRecord] = deque(maxlen=ring_size)
        self._lock = threading.Lock()
        self._waiters: list[asyncio.Future[None]] = []
        self._last_seq = self._scan_last_seq()
        self._known_size = self._size()

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def _scan_last_seq(self) -> int:
        return _last_seq_in(self.path) or _last_seq_in(self.rotated_path)

    @property
    def last_cursor(self) -> str | None:
        return format_cursor(self._last_seq) if self._last_seq else None

    # -- writing -------------------------------------------------------------------------------

    def append(
        self, message: str, *, priority: int = 6, pid: int | None = None, kind: JournalKind = "line"
    ) -> JournalRecord:
        return self.append_many([message], priority=priority, pid=pid, kind=kind)[-1]

    def append_many(
        self, messages: Iterable[str], *, priority: int = 6, pid: int | None = None, kind: JournalKind = "line"
    ) -> list[JournalRecord]:
        """Append records timestamped now, under an flock so sequence numbers stay unique."""
        now = datetime.now().astimezone()
        written: list[JournalRecord] = []
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = self._open_for_append()
            try:
                size = os.fstat(fd).st_size
                if size != self._known_size:  # another process wrote: resync and forget the ring
                    self._last_seq = max(self._last_seq, self._scan_last_seq())
                    self._ring.clear()
                chunks = []
                for message in messages:
                    self._last_seq += 1
                    record = JournalRecord(format_cursor(self._last_seq), now, message, priority, pid, kind)
                    chunks.append(_encode(self._last_seq, record))
                    written.append(record)
                data = b"".join(chunks)
                os.write(fd, data)
                self._known_size = size + len(data)
                self._ring.extend(written)
            finally:
                os.close(fd)
        self._wake()
        return written

    def _open_for_append(self) -> int:
        """Open the journal (rotating it first when it is over the size cap) and lock it."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size > self.max_bytes:
            os.replace(self.path, self.rotated_path)
            os.close(fd)
            self._known_size = -1  # forces a resync against the fresh file
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            fut.get_loop().call_soon_threadsafe(_resolve, fut)

    async def _wait_for_append(self, timeout: float) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            pass
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)

    # -- reading -------------------------------------------------------------------------------

    def _from_ring(self, after: int | None, lines: int | None) -> list[JournalRecord] | None:
        """The backlog from memory when the ring holds all of it and nobody else wrote since."""
        ring = self._ring
        if not ring or _seq_of(ring[-1]) != self._last_seq or self._size() != self._known_size:
            return None
        if after is not None:
            if _seq_of(ring[0]) > after + 1:
                return None
            return _last([rec for rec in ring if _seq_of(rec) > after], lines)
        if lines is not None and len(ring) >= lines:
            return _last(list(ring), lines)
        return None

    def _from_disk(self, after: int | None, lines: int | None) -> list[JournalRecord]:
        records: list[JournalRecord] = []
        for path in (self.rotated_path, self.path):
            records.extend(_read_records(path)[0])
        if after is not None:
            records = [rec for rec in records if _seq_of(rec) > after]
        return _last(records, lines)

    def read(self, *, after_cursor: str | None = None, lines: int | None = None) -> list[JournalRecord]:
        """Records after the cursor (all retained when None), limited to the last `lines`."""
        after = parse_cursor(after_cursor) if after_cursor is not None else None
        ring = self._from_ring(after, lines)
        return ring if ring is not None else self._from_disk(after, lines)

    async def iterate(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        """Backlog, then (if `follow`) live records, each exactly once and in order."""
        after = parse_cursor(after_cursor) if after_cursor is not None else None
        start_ino, start_offset = self._file_position()
        backlog = self._from_ring(after, lines)
        if backlog is None:
            backlog = await asyncio.to_thread(self._from_disk, after, lines)
        last = after or 0
        if after is not None and backlog and _seq_of(backlog[0]) > after + 1 and lines is None:
            yield self._gap(after, _seq_of(backlog[0]))
        for record in backlog:
            last = max(last, _seq_of(record))
            yield record
        if not follow:
            return
        # Resume tailing from where the file stood before the backlog was taken: anything written
        # meanwhile is read again and dropped by sequence number, so nothing falls in between.
        ino, offset = start_ino, start_offset
        came = time.monotonic()  # when lines last came: poll fast for a while after
        while True:
            fresh, ino, offset = self._read_new(ino, offset)
            self.polls += 1
            for record in fresh:
                seq = _seq_of(record)
                if seq > last:
                    if last and seq > last + 1:  # the file rotated twice while this reader was behind
                        yield self._gap(last, seq)
                    last = seq
                    yield record
            if fresh:
                came = time.monotonic()
                await asyncio.sleep(0)  # more may be waiting in the file: what else is due on the loop goes first
            else:
                quiet = time.monotonic() - came >= self.quiet_after_s
                await self._wait_for_append(self.idle_poll_s if quiet else self.poll_s)

    def _file_position(self) -> tuple[int | None, int]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None, 0
        return st.st_ino, st.st_size

    def _read_new(self, ino: int | None, offset: int) -> tuple[list[JournalRecord], int | None, int]:
        """Up to READ_CHUNK_BYTES of records appended since (ino, offset): the rest of the rotated file first
        when the file rotated meanwhile (one rotated too long ago is gone; `iterate` reports the gap)."""
        current_ino, size = self._file_position()
        if current_ino == ino and size == offset:
            return [], ino, offset  # nothing new: the common idle case costs one stat
        if ino is not None and current_ino != ino:
            try:
                rotated_ino = self.rotated_path.stat().st_ino
            except FileNotFoundError:
                rotated_ino = None
            if rotated_ino == ino:
                records, after, _ = _read_records(self.rotated_path, offset, READ_CHUNK_BYTES)
                if records or after != offset:
                    return records, ino, after
            offset = 0
        fresh, offset, read_ino = _read_records(self.path, offset, READ_CHUNK_BYTES)
        return fresh, read_ino if read_ino is not None else current_ino, offset

    @staticmethod
    def _gap(after: int, first: int) -> JournalRecord:
        return JournalRecord(
            cursor=format_cursor(first - 1),
            timestamp=datetime.now().astimezone(),
            message=f"-- {first - after - 1} journal entries were rotated away before they could be read --",
            priority=4,
            kind="gap",
        )


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
