"""The local host's unit file on disk: atomic replace plus a numbered history of previous versions.

Why atomic: a reader (systemd, or our own restart) must see the old unit or the new one, never half
of it, even if the panel dies mid-write. `core.atomic_file.write_atomic` does the
temp-file + fsync + rename dance. The history keeps each replaced version
byte-for-byte in `.specdec/<unit>.<n>` next to the unit, so a rollback restores exactly what ran.
"""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.unit_text import decode_unit

HISTORY_DIR = ".specdec"
UNIT_MODE = 0o644  # what systemd units usually have; an existing unit keeps its own mode


class UnitHistory:
    """One unit file and its numbered backups (oldest first; the newest is what a rollback restores)."""

    def __init__(self, unit_path: Path) -> None:
        self.unit_path = Path(unit_path)
        self.history_dir = self.unit_path.parent / HISTORY_DIR

    def read_bytes(self) -> bytes:
        try:
            return self.unit_path.read_bytes()
        except FileNotFoundError:
            raise HostError(
                f"unit file {self.unit_path} does not exist", "run `specdec-tui demo init` or push a unit first"
            ) from None

    def read_text(self) -> str:
        return decode_unit(self.read_bytes(), str(self.unit_path))

    def numbers(self) -> list[int]:
        prefix = f"{self.unit_path.name}."
        found: list[int] = []
        if self.history_dir.is_dir():
            for entry in self.history_dir.iterdir():
                suffix = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
                if suffix.isdigit():
                    found.append(int(suffix))
        return sorted(found)

    def backup_path(self, number: int) -> Path:
        return self.history_dir / f"{self.unit_path.name}.{number}"

    def push(self, text: str) -> tuple[bool, int | None]:
        """Write `text` as the unit; returns (changed, backup number holding the previous text)."""
        new = text.encode("utf-8")
        try:
            old: bytes | None = self.unit_path.read_bytes()
        except FileNotFoundError:
            old = None
        if old == new:
            return False, None
        self.unit_path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if old is not None:
            self.history_dir.mkdir(parents=True, exist_ok=True)
            backup = (self.numbers() or [0])[-1] + 1
            write_atomic(self.backup_path(backup), old)
        write_atomic(self.unit_path, new, mode=None if old is not None else UNIT_MODE)
        return True, backup

    def rollback(self) -> str:
        """Put the newest backup back in place (byte-identical) and drop it from the history."""
        numbers = self.numbers()
        if not numbers:
            raise HostError(f"no earlier version of {self.unit_path.name} to roll back to", "push a change first")
        source = self.backup_path(numbers[-1])
        data = source.read_bytes()
        write_atomic(self.unit_path, data)
        source.unlink()
        return decode_unit(data, str(self.unit_path))

    def drop(self, numbers: list[int]) -> None:
        """Delete backups `numbers`; one already gone is no error."""
        for number in numbers:
            self.backup_path(number).unlink(missing_ok=True)
