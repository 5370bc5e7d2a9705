"""A problem found in a flag set, in words, with the edit that fixes it (if one makes sense)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """`fix` holds flag -> value to set (None = bare switch); `remove` the flags to delete; both empty when no
    automatic fix makes sense. `core.flags.apply_fix` applies them: sets first, then removals."""

    level: Level
    flag: str | None
    message: str
    fix: dict[str, str | None] | None = None
    remove: tuple[str, ...] = field(default=())

    @property
    def fixable(self) -> bool:
        return bool(self.fix) or bool(self.remove)
