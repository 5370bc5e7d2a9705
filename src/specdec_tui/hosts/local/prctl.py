"""The supervisor's process controls, through libc's prctl: it becomes its service's subreaper, and the service
dies with it. Apart from `procs` (process facts) because only the supervisor needs them, and ctypes costs the
panel ~1 ms to import before its first frame."""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watchdog and the group kill still apply


def become_subreaper() -> None:
    """Orphans of the service are re-parented to us (and reaped by us), as systemd does for its units."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> None:
    """In a child before exec: the kernel SIGKILLs it if its parent (the supervisor) dies."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
