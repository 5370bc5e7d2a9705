"""Why the last start of a unit failed, from its journal: the line an operator needs in the error dialog."""

from __future__ import annotations

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, cause_rank
from specdec_tui.hosts.base import Host, HostError


async def start_failure_cause(host: Host, lines: int = 400) -> str | None:
    """The first specific fatal error in the unit's journal since systemd last started it, or None.

    SGLang prints the cause (e.g. "Not enough memory") and then generic follow-ups ("Received sigquit
    from a child process"); the first specific error is the one worth showing."""
    errors: list[tuple[int, str]] = []
    try:
        async for record in host.journal(follow=False, lines=lines):
            message = record.message.strip()
            if message.startswith(("Started ", "Starting ")):
                errors.clear()
                continue
            parsed = parse_line(message)
            if isinstance(parsed, ErrorRecord) and parsed.fatal:
                errors.append((cause_rank(parsed), message))
    except HostError:
        return None
    return min(errors, key=lambda pair: pair[0])[1] if errors else None  # min keeps the first of equals
