"""Why the last start of a unit failed, from its journal: the line an operator needs in the error dialog."""

from __future__ import annotations

import re

from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, cause_rank
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError

# systemd's own lines when it cannot run ExecStart at all (no SGLang line follows: the program never ran), most
# telling first; systemd words them "Failed to locate executable %s: %m",
# "Failed at step %s spawning %s: %m" and "Main process exited, code=%s, status=%i/%s" (203/EXEC).
SYSTEMD_CAUSES = (
    re.compile(r"Failed to locate executable \S+: .+"),
    re.compile(r"Failed at step [A-Z_]+ spawning \S+: .+"),
    re.compile(r"Changing to the requested working directory failed: .+"),
    re.compile(r"Main process exited, code=exited, status=2\d\d/[A-Z_]+"),
)


def systemd_cause_rank(message: str) -> int | None:
    """The rank of a systemd line that says why the unit's program could not be started (lower is more
    telling; every one outranks SGLang's own errors), or None for any other line."""
    for rank, pattern in enumerate(SYSTEMD_CAUSES):
        if pattern.search(message):
            return rank - len(SYSTEMD_CAUSES)
    return None


async def start_failure_cause(host: Host, lines: int = 400) -> str | None:
    """The first specific fatal error in the unit's journal since systemd last started it, or None.

    systemd's own line comes first when it could not run the program at all (a missing executable: 203/EXEC).
    SGLang prints the cause (e.g. "Not enough memory") and then generic follow-ups ("Received sigquit
    from a child process"); the first specific error is the one worth showing."""
    errors: list[tuple[int, str]] = []
    try:
        async for record in host.journal(follow=False, lines=lines):
            message = record.message.strip()
            if message.startswith(("Started ", "Starting ")):
                errors.clear()
                continue
            systemd_rank = systemd_cause_rank(message)
            if systemd_rank is not None:
                errors.append((systemd_rank, message))
                continue
            parsed = parse_line(message)
            if isinstance(parsed, ErrorRecord) and parsed.fatal:
                errors.append((cause_rank(parsed), message))
    except HostError:
        return None
    return min(errors, key=lambda pair: pair[0])[1] if errors else None  # min keeps the first of equals
