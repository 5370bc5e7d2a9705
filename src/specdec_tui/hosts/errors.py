"""What a host operation raises: `HostError` and its kinds. Apart from the records in `hosts.base` so that code
which only catches them (the CLI, the panel's start) does not build those dataclasses before the first frame."""

from __future__ import annotations


class HostError(Exception):
    """A host operation failed. `str(err)` says what failed; `hint` says what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


class HostKeyError(HostError):
    """The host key is unknown or changed; refused by default."""


class PrivilegeError(HostError):
    """sudo needs a password (or the user may not run systemctl)."""


class UnitRejected(HostError):
    """The edited unit was refused (invalid name, `systemd-analyze verify` error); nothing changed."""


class ConnectionLost(HostError):
    """The connection dropped in the middle of an operation."""
