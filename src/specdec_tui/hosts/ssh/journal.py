"""Following a unit's journal over SSH (`journalctl -o json`) so that a dropped link costs no lines:
it resumes after the last cursor seen, backs off between reconnects, and marks each resume with a
"gap" record so the UI can show that the stream was interrupted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncssh
import orjson

from specdec_tui.core.redact import redact_text
from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.base import JournalRecord
from specdec_tui.hosts.errors import ConnectionLost, HostError, HostKeyError, PrivilegeError

RECONNECT_ERRORS = (asyncssh.Error, OSError, ConnectionLost, asyncio.IncompleteReadError)


@dataclass
class JournalFollow:
    """What the follow needs from its host: the shared connection (re-opened on demand), how to
    wrap journalctl (sudo or not), and how to forget a connection that closed."""

    unit: str
    address: str
    connection: Callable[[], Awaitable[asyncssh.SSHClientConnection]]
    as_reader: Callable[[rc.RemoteCommand], rc.RemoteCommand]
    forget_closed: Callable[[], None]
    reconnect_delays: tuple[float, ...]

    async def records(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncGenerator[JournalRecord, None]:
        cursor = after_cursor
        failures = 0
        while True:
            try:
                conn = await self.connection()
                command = self.as_reader(
                    rc.journal(self.unit, after_cursor=cursor, lines=lines if cursor is None else None, follow=follow)
                )
                async with conn.create_process(command.line, encoding=None) as proc:
                    while True:
                        raw = await proc.stdout.readline()
                        if not raw:
                            break
                        record = parse_journal_line(raw)
                        if record is not None:
                            failures = 0
                            cursor = record.cursor
                            yield record
                    if not follow:
                        return
                    raise ConnectionLost("journalctl stopped")
            except (HostKeyError, PrivilegeError):
                raise
            except RECONNECT_ERRORS as err:
                if failures >= len(self.reconnect_delays):
                    raise ConnectionLost(
                        f"lost the journal of {self.unit} on {self.address}: {err}", "reconnect later"
                    ) from err
                await asyncio.sleep(self.reconnect_delays[failures])
                failures += 1
                self.forget_closed()
                if cursor is None and lines is not None:
                    lines = 0  # nothing seen yet: do not replay the tail after reconnecting
                try:
                    await self.connection()
                except HostError:
                    continue
                yield JournalRecord(
                    cursor=cursor or "", timestamp=datetime.now(UTC), kind="gap",
                    message=f"connection to {self.address} lost ({err}); reconnected, resuming after the last line",
                )


def parse_journal_line(raw: bytes) -> JournalRecord | None:
    """One `journalctl -o json` line → JournalRecord. MESSAGE may be a string, null or a byte array."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(entry, dict):  # a stray non-object line (`0`, `"x"`) must not end the journal stream
        return None
    message = entry.get("MESSAGE")
    if isinstance(message, list):
        message = bytes(b & 0xFF for b in message if isinstance(b, int)).decode(errors="replace")
    elif message is None:
        message = ""
    try:
        stamp = datetime.fromtimestamp(int(entry.get("__REALTIME_TIMESTAMP", 0)) / 1e6, tz=UTC)
    except (TypeError, ValueError):
        stamp = datetime.now(UTC)
    try:
        priority = int(entry.get("PRIORITY", 6))
    except (TypeError, ValueError):
        priority = 6
    pid = entry.get("_PID")
    return JournalRecord(
        cursor=str(entry.get("__CURSOR", "")),
        timestamp=stamp,
        message=redact_text(str(message)),  # SGLang logs its ServerArgs, api_key included
        priority=priority,
        pid=int(pid) if isinstance(pid, str) and pid.isdigit() else None,
    )
