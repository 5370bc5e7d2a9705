"""Process checks for tests, read from /proc: a zombie counts as gone (this container's init never
reaps orphans, so `kill(pid, 0)` would call an exited process alive)."""

from __future__ import annotations

from pathlib import Path


def _stat_fields(stat_path: Path) -> list[str] | None:
    try:
        stat = stat_path.read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat[stat.rfind(")") + 2 :].split()


def running(pid: int | None) -> bool:
    """The process exists and is not a zombie."""
    fields = _stat_fields(Path(f"/proc/{pid}/stat")) if pid else None
    return fields is not None and fields[0] not in ("Z", "X")


def group_alive(pgid: int | None) -> bool:
    """Some member of the process group runs (zombies do not count)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(entry / "stat")
            if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                return True
    return False
