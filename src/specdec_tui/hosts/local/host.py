"""`LocalHost`: the demo's stand-in for SSH + systemd, indistinguishable to the panel.

It keeps a unit file on disk (atomic pushes, numbered history), "loads" it at restart like
daemon-reload, and hands the loaded unit to a supervisor process (`local_supervisor`) that runs
ExecStart, writes the journal and the unit's state file, and outlives the command that started it,
as a systemd unit outlives `systemctl restart`. Any LocalHost on the workspace, in any process, reads
the status from that state file, follows the journal from a cursor, and stops the service by
signalling the supervisor (which signals the service's group; the host does it itself if the
supervisor is gone).

Ownership: `keep_running=True` (headless `host`/`bench`) leaves a started service running, like a
real host. `keep_running=False` (the panel, the default) owns what it starts: `close()` stops it, and
the supervisor stops it too when the owning process dies, even by SIGKILL, so no server is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.core.unit_errors import UnitSyntaxError
from specdec_tui.hosts.base import (
    GpuFact,
    HostInfo,
    JournalRecord,
    PushResult,
    RestartResult,
    ServiceStatus,
    StagedPush,
)
from specdec_tui.hosts.errors import HostError, UnitRejected
from specdec_tui.hosts.local.procs import group_alive, signal_group

if TYPE_CHECKING:  # imported where used (_daemon_reload, prepare, journal_store)
    from specdec_tui.hosts.local.journal import JournalStore
    from specdec_tui.hosts.local.spec import ServiceSpec
from specdec_tui.hosts.local.state import (
    SUPERVISOR_MODULE,
    SYSTEMD_PID,
    ServiceState,
    read_state,
    state_path,
    write_state,
)
from specdec_tui.hosts.local.units import UnitHistory

START_TIMEOUT_S = 60.0  # the supervisor is a Python process: slow to start on a loaded machine
STOP_MARGIN_S = 5.0  # beyond the unit's stop timeout, before the host stops the service itself
CONTROL_LOCK_TIMEOUT_S = 120.0
POLL_S = 0.02


class LocalHost:
    """A `Host` that runs the unit's ExecStart on this machine (the demo host)."""

    def __init__(
        self,
        workspace: Path,
        unit_name: str = "sglang-demo.service",
        base_url: str = "http://127.0.0.1:30000",
        *,
        stop_timeout_s: float = 10,
        name: str = "demo",
        keep_running: bool = False,
    ) -> None:
        self.workspace = Path(workspace)
        self.unit_name = unit_name
        self.stop_timeout_s = stop_timeout_s
        self.keep_running = keep_running
        self.units = UnitHistory(self.workspace / "units" / unit_name)
        self.state_file = state_path(self.workspace, unit_name)
        self.supervisor_log = self.state_file.with_name(f"{unit_name}.supervisor.log")
        self.info = HostInfo(
            name=name,
            kind="local",
            address="localhost",
            unit=unit_name,
            unit_path=str(self.units.unit_path),
            base_url=base_url,
            extra={"workspace": str(self.workspace)},
        )
        self._started: set[str] = set()  # start ids of the supervisors this host launched
        self._launched: list[subprocess.Popen[bytes]] = []
        self._op_lock: asyncio.Lock | None = None

    @functools.cached_property
    def journal_store(self) -> JournalStore:
        """The service's journal, opened on first use: its module (and orjson, ~2 ms to import) loads when the journal
        is first read or written, after the panel's first frame."""
        from specdec_tui.hosts.local.journal import JournalStore

        return JournalStore(self.workspace / "journal.jsonl")

    # -- lifecycle -------------------------------------------------------------------------------

    async def connect(self) -> None:
        self._ensure_dirs()
        await self._current_state()

    async def close(self) -> None:
        """keep_running=False: stop the service this host started. keep_running=True: leave it running."""
        if not self.keep_running:
            state = read_state(self.state_file)
            if state is not None and state.start_id in self._started and not state.is_final:
                await self.stop()
        self._reap_launched()

    def _ensure_dirs(self) -> None:
        self.units.unit_path.parent.mkdir(parents=True, exist_ok=True)
        self.state_file.parent.mkdir(parents=True, exist_ok=True)

    def _lock(self) -> asyncio.Lock:
        if self._op_lock is None:
            self._op_lock = asyncio.Lock()
        return self._op_lock

    @contextlib.asynccontextmanager
    async def _control(self) -> AsyncIterator[None]:
        """One restart/stop at a time across processes (two scripts must not start two supervisors)."""
        self._ensure_dirs()
        fd = os.open(self.state_file.with_name(f"{self.unit_name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + CONTROL_LOCK_TIMEOUT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise HostError(f"another process has been restarting or stopping {self.unit_name} "
                                        f"for {CONTROL_LOCK_TIMEOUT_S:.0f} s", "wait for it, then try again") from None
                    await asyncio.sleep(POLL_S)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    # -- unit file -------------------------------------------------------------------------------

    async def read_unit(self) -> str:
        self._ensure_dirs()
        return self.units.read_text()

    async def read_file(self, path: str) -> bytes:
        """A file on this machine (the local host is this machine), as its supervisor reads EnvironmentFile=."""
        try:
            return await asyncio.to_thread(Path(path).read_bytes)
        except OSError as err:
            raise HostError(f"cannot read {path}: {err.strerror or err}") from None

    async def push(self, text: str) -> PushResult:
        """Validate, then atomically replace the unit; the running service is untouched until restart."""
        return await self.commit(await self.prepare(text))

    async def prepare(self, text: str) -> StagedPush:
        """The local half of staging: the text must load as a unit (systemd-analyze verify's part)."""
        self._ensure_dirs()
        try:
            from specdec_tui.hosts.local.spec import load_spec  # here, not at the top: see _daemon_reload

            load_spec(self.unit_name, text)
        except UnitSyntaxError as err:
            raise UnitRejected(f"{self.unit_name} was not pushed: {err}", "fix the unit and push again") from None
        path = self.units.unit_path
        return StagedPush(unit=self.unit_name, text=text, changed=not path.exists() or path.read_bytes() != text.encode())

    async def commit(self, staged: StagedPush) -> PushResult:
        """The unit written in a thread: its backup and itself each fsynced (~40 ms on a loaded disk), which on the
        panel's event loop held its keys at every push of a sweep (issue 34)."""
        changed, backup = await asyncio.to_thread(self.units.push, staged.text)
        return PushResult(unit=self.unit_name, changed=changed, backup=backup)

    async def discard(self, staged: StagedPush) -> None:
        """Nothing was written by `prepare`."""

    async def history(self) -> list[int]:
        return self.units.numbers()

    async def read_backup(self, number: int) -> str:
        try:
            return self.units.backup_path(number).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise HostError(f"cannot read backup {number} of {self.unit_name}: {err}") from None

    async def rollback(self) -> str:
        self._ensure_dirs()
        text = await asyncio.to_thread(self.units.rollback)  # fsynced: off the event loop, as `commit`
        self._daemon_reload(text)
        return text

    async def drop_backups(self, numbers: Sequence[int]) -> None:
        self.units.drop(list(numbers))

    def _daemon_reload(self, text: str) -> ServiceSpec:
        """Load the unit text as systemd would; a unit that cannot run is refused in words."""
        try:
            # imported on first use: the unit parser and flag tables (~15 ms) are not needed before the demo
            # panel's first frame, which builds this host (bench/cold_start.py)
            from specdec_tui.hosts.local.spec import load_spec

            return load_spec(self.unit_name, text)
        except UnitSyntaxError as err:
            raise UnitRejected(f"{self.unit_name} cannot be loaded: {err}", "fix the unit, push, restart") from None

    # -- service ---------------------------------------------------------------------------------

    async def status(self) -> ServiceStatus:
        self._ensure_dirs()
        state = await self._current_state()
        if state is None:
            return ServiceStatus(unit=self.unit_name, active_state="inactive", sub_state="dead")
        return state.to_status()

    async def restart(self) -> RestartResult:
        """daemon-reload, stop what runs, start the freshly loaded unit under a new supervisor."""
        self._ensure_dirs()
        async with self._lock(), self._control():
            text = self.units.read_text()
            self._daemon_reload(text)
            await self._stop_service()
            start_id = uuid.uuid4().hex
            self._started.add(start_id)
            proc = self._launch(start_id, text)
            try:
                state = await self._wait_started(start_id, proc)
            except asyncio.CancelledError:
                # As systemd's start job, a launched start goes on when its caller is cancelled. Its state must
                # be on record before the lock is let go, or a stop issued next finds the old one and does nothing.
                with contextlib.suppress(HostError):
                    await asyncio.shield(self._wait_started(start_id, proc))
                raise
            return RestartResult(state.start_job or "failed", state.to_status())

    async def stop(self) -> None:
        self._ensure_dirs()
        async with self._lock(), self._control():
            await self._stop_service()

    async def gpu_facts(self) -> list[GpuFact]:
        return []  # the demo has no GPUs; the panel shows the sim's facts from /server_info instead

    async def upload(self, name: str, data: bytes) -> str:
        """`data` as `name` beside the unit (temp file, fsync, rename: `core.atomic_file.write_atomic`)."""
        from specdec_tui.core.atomic_file import write_atomic
        from specdec_tui.hosts.commands import valid_side_file

        try:
            path = self.units.unit_path.parent / valid_side_file(name)
        except ValueError as err:
            raise HostError(f"{name!r} was not uploaded: {err}") from None
        self._ensure_dirs()
        try:
            write_atomic(path, data, mode=0o644)
        except OSError as err:
            raise HostError(f"could not write {path}: {err}") from None
        return str(path)

    def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        return self.journal_store.iterate(after_cursor=after_cursor, follow=follow, lines=lines)

    # -- the supervisor --------------------------------------------------------------------------

    def _launch(self, start_id: str, text: str) -> subprocess.Popen[bytes]:
        """Start a supervisor in a session of its own, its output to a log file (never our terminal).
        The loaded unit goes through its stdin: it may hold an API key, which no file outside the unit may."""
        cmd = [sys.executable, "-m", SUPERVISOR_MODULE, str(self.workspace), self.unit_name,
               "--start-id", start_id, "--stop-timeout", str(self.stop_timeout_s)]  # fmt: skip
        if not self.keep_running:
            cmd += ["--owner", str(os.getpid())]
        with open(self.supervisor_log, "ab") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, start_new_session=True)
        self._launched.append(proc)
        assert proc.stdin is not None
        try:
            proc.stdin.write(text.encode("utf-8"))
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it died at once: `_wait_started` reports it
        return proc

    def _reap_launched(self) -> None:
        """Reap supervisors of ours that exited, so none lingers as a zombie of a long-lived panel."""
        self._launched = [proc for proc in self._launched if proc.poll() is None]

    async def _wait_started(self, start_id: str, proc: subprocess.Popen[bytes]) -> ServiceState:
        """Until the new supervisor says whether ExecStart was spawned."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            state = read_state(self.state_file)
            if state is not None and state.start_id == start_id and state.start_job:
                return state
            if proc.poll() is not None and read_state(self.state_file) == state:
                raise HostError(f"the supervisor of {self.unit_name} exited (code {proc.returncode}) before "
                                "starting it", f"see {self.supervisor_log}")  # fmt: skip
            if time.monotonic() > deadline:
                raise HostError(f"the supervisor of {self.unit_name} did not start it within {START_TIMEOUT_S:.0f} s",
                                f"see {self.supervisor_log}")  # fmt: skip
            await asyncio.sleep(POLL_S)

    async def _current_state(self) -> ServiceState | None:
        """The state file, checked against the kernel: a service whose supervisor is gone is ended."""
        self._reap_launched()
        state = read_state(self.state_file)
        if state is None or state.is_final or state.supervisor_running():
            return state
        again = read_state(self.state_file)  # it may have written its final state and exited meanwhile
        if again != state:
            return again
        return await self._end_unsupervised(state, graceful=False)

    async def _stop_service(self) -> None:
        """As `systemctl stop`: the supervisor stops the group (SIGTERM, SIGKILL after the timeout)."""
        state = await self._current_state()
        if state is None or state.is_final:
            return
        assert state.supervisor_pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.supervisor_pid, signal.SIGTERM)
        timeout = (state.stop_timeout_s if state.stop_timeout_s is not None else self.stop_timeout_s) + STOP_MARGIN_S
        if await self._wait_until(lambda: not state.supervisor_running(), timeout):
            return
        with contextlib.suppress(ProcessLookupError):  # a hung supervisor: do its job
            os.kill(state.supervisor_pid, signal.SIGKILL)
        await self._end_unsupervised(state, graceful=True)

    async def _end_unsupervised(self, state: ServiceState, *, graceful: bool) -> ServiceState:
        """Stop a service group nobody supervises any more (its supervisor died) and record it failed."""
        pgid = state.pgid
        if group_alive(pgid):
            self._log(f"{self.unit_name}: Killing process group {pgid}: its supervisor "
                      f"{state.supervisor_pid} is gone.", priority=4)  # fmt: skip
            if graceful:
                signal_group(pgid, signal.SIGTERM)
                await self._wait_until(lambda: not group_alive(pgid), state.stop_timeout_s or self.stop_timeout_s)
            signal_group(pgid, signal.SIGKILL)
            await self._wait_until(lambda: not group_alive(pgid), STOP_MARGIN_S)
        self._log(f"{self.unit_name}: Failed with result 'supervisor-lost'.", priority=4)
        ended = replace(state, active_state="failed", sub_state="failed", result="supervisor-lost", main_pid=None,
                        pgid=None)  # fmt: skip
        write_state(self.state_file, ended)
        return ended

    async def _wait_until(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                return False
            self._reap_launched()
            await asyncio.sleep(POLL_S)
        return True

    def _log(self, message: str, priority: int = 6) -> None:
        self.journal_store.append(message, priority=priority, pid=SYSTEMD_PID)
