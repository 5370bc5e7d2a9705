"""Errors raised by the unit-file model (kept apart so the quoting module and the unit model share them)."""

from __future__ import annotations


class UnitSyntaxError(ValueError):
    """The unit text cannot be read the way systemd reads it.

    `line` is 1-based in the unit file (0 when the problem is not tied to a line, e.g. no ExecStart=);
    `column` is 1-based inside that line when known. `str(err)` reads "line N: message".
    """

    def __init__(self, message: str, line: int = 0, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}{message}")


class UnitEditError(ValueError):
    """An edit was asked that the unit's layout cannot take without rewriting other bytes."""
