"""A pytest plugin that makes a quiet machine behave as a loaded one, to find tests and code that race (not loaded by
default; no test depends on it). CI's machine is slower and shared: a test that passes here may fail there.

    PYTHONPATH=. LOAD_PROBES=starved-idle,slow-host pytest -p tests.load_probes tests/test_ui_tune.py

- starved-idle: Textual's `Pilot.pause()` finds the process idle after one 20 ms slice. It waits for the messages
  queued before it, then until the process's CPU time stops moving (`textual._wait.wait_for_idle`): a process
  starved of CPU looks idle at once, so a test that needs more than the queued messages (a rebuild, a message that
  bubbles, a worker's turn) after one pause fails on a loaded machine only. This probe takes that wait away; what
  is left (20 ms) still covers a quick rebuild on a quiet machine, so run it beside two busy loops
  (`nice -n 0 python -c "while True: pass"`, each killed after) to see what CI's load does.
- slow-host: every call to the local (demo) host waits `LOAD_PROBE_HOST_S` (0.25 s) first, as an SSH host or a
  loaded machine does: code that assumes a host call ends within a frame shows (the tune and the sweep held the
  trial loop only after reading the host's unit).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine
from typing import Any

PROBES = {p.strip() for p in os.environ.get("LOAD_PROBES", "starved-idle,slow-host").split(",") if p.strip()}
HOST_DELAY_S = float(os.environ.get("LOAD_PROBE_HOST_S", "0.25"))
HOST_CALLS = ("connect", "read_unit", "read_file", "push", "prepare", "commit", "history", "read_backup", "rollback",
              "status", "restart", "gpu_facts")


async def _starved_idle(min_sleep: float = 0.02, max_sleep: float = 1) -> None:
    await asyncio.sleep(0.02)


def _slowed(call: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Coroutine[Any, Any, Any]]:
    @functools.wraps(call)
    async def slow(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(HOST_DELAY_S)
        return await call(*args, **kwargs)

    return slow


if "starved-idle" in PROBES:
    from textual import pilot

    setattr(pilot, "wait_for_idle", _starved_idle)  # noqa: B010 - the name Pilot.pause calls, not exported

if "slow-host" in PROBES:
    from specdec_tui.hosts.local.host import LocalHost

    for _name in HOST_CALLS:
        setattr(LocalHost, _name, _slowed(getattr(LocalHost, _name)))
