"""The host interface: what the panel needs from a machine that runs an SGLang systemd unit.

Two implementations stand behind it: `LocalHost` (the demo: runs ExecStart under a supervisor process) and
`SSHHost` (asyncssh + systemd). The UI, the workflow and the headless commands only see `Host`.
No Textual here; records are plain dataclasses so they cross thread/process boundaries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

JournalKind = Literal["line", "gap", "marker"]


@dataclass(frozen=True, slots=True)
class JournalRecord:
    """One journal entry. `cursor` is opaque and resumable (journald's __CURSOR, or the local host's)."""

    cursor: str
    timestamp: datetime
    message: str
    priority: int = 6
    pid: int | None = None
    kind: JournalKind = "line"
    node: str | None = None  # the cluster node ([hosts.*] name) it came from; None on a single host


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """The systemd properties the panel shows (names as `systemctl show` prints them)."""

    unit: str
    active_state: str  # active | activating | deactivating | inactive | failed | reloading
    sub_state: str = ""
    main_pid: int | None = None
    exec_main_status: int | None = None
    n_restarts: int = 0
    active_enter: datetime | None = None
    result: str = ""  # systemd's Result= (success, exit-code, signal, timeout, ...)

    @property
    def is_running(self) -> bool:
        return self.active_state in ("active", "activating", "reloading")

    @property
    def is_failed(self) -> bool:
        return self.active_state == "failed"


@dataclass(frozen=True, slots=True)
class PushResult:
    """Outcome of an atomic push: `backup` is the history number that holds the previous text."""

    unit: str
    changed: bool
    backup: int | None = None


@dataclass(frozen=True, slots=True)
class StagedPush:
    """The first half of a push: the new text is on the host and passed its checks (staged, `systemd-analyze
    verify`), the unit itself untouched. `changed` False: the host already has this text."""

    unit: str
    text: str
    changed: bool


@dataclass(frozen=True, slots=True)
class RestartResult:
    """Outcome of daemon-reload + restart: systemd's job result and the unit's state after it."""

    job_result: str  # done | failed | timeout | canceled | dependency | skipped
    status: ServiceStatus

    @property
    def ok(self) -> bool:
        return self.job_result == "done"


@dataclass(frozen=True, slots=True)
class GpuFact:
    index: int
    name: str
    memory_used_mib: float
    memory_total_mib: float
    utilization_pct: float


@dataclass(frozen=True, slots=True)
class HostInfo:
    """Static description of a host for display: where it is and which unit it drives."""

    name: str
    kind: Literal["local", "ssh"]
    address: str
    unit: str
    unit_path: str
    base_url: str
    extra: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Host(Protocol):
    """What the panel asks of a host. All methods are async and raise `HostError` in words."""

    info: HostInfo

    async def connect(self) -> None: ...

    async def close(self) -> None: ...

    async def read_unit(self) -> str:
        """The unit file's text as it is on the host now."""
        ...

    async def status(self) -> ServiceStatus: ...

    async def push(self, text: str) -> PushResult:
        """Atomically replace the unit with `text` (exact bytes), keeping the old one in the history."""
        ...

    async def restart(self) -> RestartResult:
        """daemon-reload, then restart (or start when inactive)."""
        ...

    async def stop(self) -> None: ...

    async def history(self) -> list[int]:
        """Backup numbers on the host, oldest first; the last is what a rollback restores."""
        ...

    async def read_backup(self, number: int) -> str:
        """The text of backup `number` (from `history()`), as a rollback would restore it; HostError when it
        cannot be read. Lets the panel say what a rollback restores before it asks."""
        ...

    async def rollback(self) -> str:
        """Restore the newest backup over the unit (byte-identical), drop it from the history and
        daemon-reload. Returns the restored text. The caller restarts."""
        ...

    async def drop_backups(self, numbers: Sequence[int]) -> None:
        """Delete backups `numbers` (from `history()`); the unit itself is not touched. A sweep or tune drops
        the backups of the values it tried once it has put the host back (`loop.task_backups`)."""
        ...

    def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        """Journal entries of the unit after `after_cursor` (or the last `lines`), then live ones if
        `follow`. Reconnects by itself and yields a `kind="gap"` record where it did."""
        ...

    async def gpu_facts(self) -> list[GpuFact]:
        """GPU memory and utilization, or [] when the host has no nvidia-smi."""
        ...

    async def upload(self, name: str, data: bytes) -> str:
        """Write `data` as the file `name` beside the unit (its directory), atomically: a reader sees the old
        file or the new one, never half. Returns the file's path on the host, as the unit would name it (an
        adaptive-config JSON the unit's ExecStart reads). `name` is a plain file name, never a unit's
        (`hosts.commands.valid_side_file`)."""
        ...


@dataclass(frozen=True)
class PythonRun:
    """What a Python run on a host answered: exit status and its output as text."""

    returncode: int
    stdout: str
    stderr: str


@runtime_checkable
class PythonProbe(Protocol):
    """A host that can run a short Python source with a given interpreter (unprivileged, source on stdin): how the
    panel learns the host's SGLang release and its flag schema (core/sglang_schema/host_probe.py)."""

    async def run_python(self, python: str, source: bytes) -> PythonRun: ...


@runtime_checkable
class FileReader(Protocol):
    """A host that can read a file it holds (with the rights its unit changes need): how a trial records the
    behaviour-changing variables of the unit's EnvironmentFile= (core/provenance.py), which the unit text lacks."""

    async def read_file(self, path: str) -> bytes:
        """The file's bytes; HostError in words when it is absent or cannot be read."""
        ...


@runtime_checkable
class TwoPhaseHost(Host, Protocol):
    """A host whose push splits in two, so several hosts can be pushed all-or-none (`hosts.cluster`):
    `prepare` stages and verifies and changes nothing a restart would see, `commit` backs up and replaces,
    `discard` drops what `prepare` staged. `push` is `prepare` then `commit`."""

    async def prepare(self, text: str) -> StagedPush: ...

    async def commit(self, staged: StagedPush) -> PushResult: ...

    async def discard(self, staged: StagedPush) -> None: ...
