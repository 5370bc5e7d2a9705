"""`CliError`: a failure every command reports to the user as one message (no traceback).

This module imports nothing else of the CLI, so any command module (and `main`) can import it without
creating an import cycle.
"""

from __future__ import annotations


class CliError(Exception):
    """A failure to report to the user as one message; exit code 1 unless given."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code
