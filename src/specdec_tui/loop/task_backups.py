"""The backups a sweep, tune or replay leaves in the host's unit history, dropped once it has settled the host.

Each value such a task tries is a push, and every push keeps the unit it replaces as a backup. Put back on the
unit it started from, the host's newest backup was the task's last value, so a rollback afterwards (`u`, `host
rollback`) restored a transient unit nobody chose instead of the unit before the task. Once the task has settled
the host: back on the unit it started from, the history is as it was before the task; left on another unit (a
sweep's winner), one backup holding the unit it started from stays, so a rollback undoes the task as a whole.
Nothing is dropped unless the first backup the task made holds the unit it started from (the task's own
first push): a history another hand wrote in meanwhile is left as it is."""

from __future__ import annotations

from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError


async def history_now(host: Host) -> list[int] | None:
    """The host's backup numbers, or None when they cannot be read (then nothing is dropped later)."""
    try:
        return await host.history()
    except HostError:
        return None


async def forget_task_backups(host: Host, original: str, before: list[int] | None) -> None:
    """Drops the backups made since `before` (the history when the task started from `original`), keeping the
    first when the host no longer runs `original`. Quiet: a host that cannot say keeps its backups."""
    if before is None:
        return
    try:
        last = max(before, default=0)
        made = [number for number in await host.history() if number > last]
        if not made or await host.read_backup(made[0]) != original:
            return
        await host.drop_backups(made if await host.read_unit() == original else made[1:])
    except HostError:
        return
