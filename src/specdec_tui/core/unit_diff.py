"""Comparing two units: which SGLang flags changed, and a unified diff of their text."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from specdec_tui.core.flags import canonical_name
from specdec_tui.core.unit import UnitFile
from specdec_tui.core.unit_syntax import physical_lines


@dataclass(frozen=True)
class FlagChange:
    """One flag that differs between two units; None on a side means absent there ("" marks a switch)."""

    name: str
    old: str | None
    new: str | None


def flag_changes(old: UnitFile, new: UnitFile) -> list[FlagChange]:
    """Flags added, removed or changed from `old` to `new` (switches reported as ""), by canonical name."""
    def table(unit: UnitFile) -> dict[str, tuple[str, str]]:
        return {canonical_name(k): (k, "" if v is None else v) for k, v in unit.flags().items()}

    before, after = table(old), table(new)
    changes = []
    for key in list(before) + [k for k in after if k not in before]:
        b, a = before.get(key), after.get(key)
        old_value = None if b is None else b[1]
        new_value = None if a is None else a[1]
        if old_value != new_value or (b is None) != (a is None):
            changes.append(FlagChange((a or b)[0], old_value, new_value))  # type: ignore[index]
    return changes


def unified_diff(old: str, new: str, old_name: str = "running", new_name: str = "edited") -> str:
    """A unified diff of two unit texts ("" when equal); marks a missing final newline like diff(1)."""
    out: list[str] = []
    for line in difflib.unified_diff(physical_lines(old), physical_lines(new), old_name, new_name):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
