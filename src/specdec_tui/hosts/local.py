"""`LocalHost`: the demo's stand-in for SSH + systemd, indistinguishable to the panel.

It keeps a unit file on disk (atomic pushes, numbered history), "loads" it at restart like
daemon-reload, runs ExecStart as a child in its own process group, reports systemd-style states, and
writes the child's output plus systemd's own lines (`Started …`, `Main process exited …`) to a
resumable journal. No process is ever left behind: stop = SIGTERM to the group then SIGKILL, an
atexit hook kills what is still running, the child gets PR_SET_PDEATHSIG, and a service left over
by a panel that was killed outright is reaped by the next LocalHost on the same workspace.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import AsyncIterator

import orjson

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.redact import redact_text
from specdec_tui.core.unit_errors import UnitSyntaxError
from specdec_tui.hosts.base import (
    GpuFact,
    HostInfo,
    JournalRecord,
    PushResult,
    RestartResult,
    ServiceStatus,
    UnitRejected,
)
from specdec_tui.hosts.local_journal import JournalStore
from specdec_tui.hosts.local_spec import ServiceSpec, load_spec
from specdec_tui.hosts.local_units import UnitHistory

SYSTEMD_PID = 1  # systemd's own journal lines carry _PID=1, as on a real host
ERRORISH = re.compile(r"(error|exception|traceback|fatal|critical|errno)\b", re.IGNORECASE)
EXIT_NAMES = {
    1: "FAILURE", 2: "INVALIDARGUMENT", 3: "NOTIMPLEMENTED", 4: "NOPERMISSION", 5: "NOTINSTALLED",
    6: "NOTCONFIGURED", 7: "NOTRUNNING", 200: "CHDIR", 203: "EXEC",
}  # fmt: skip
READ_LIMIT = 4 * 1024 * 1024
GROUP_GONE_TIMEOUT_S = 5.0

# The child first runs this tiny launcher: it asks the kernel to SIGTERM it if the panel dies (even by
# SIGKILL), then execs the real ExecStart in place, so the PID the panel shows is the service's PID.
_LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "try:\n ctypes.CDLL(None).prctl(1, signal.SIGTERM)\nexcept Exception:\n pass\n"
    "if os.getppid() != int(sys.argv[1]):\n os._exit(0)\n"
    "try:\n os.execv(sys.argv[2], sys.argv[3:])\n"
    "except OSError as e:\n"
    " print(f'Failed at step EXEC spawning {sys.argv[2]}: {e.strerror}', file=sys.stderr)\n os._exit(203)\n"
)

# Process groups still running, for the atexit hook (pgid → stop timeout).
_LIVE_GROUPS: dict[int, float] = {}


def _kill_live_groups() -> None:
    """atexit: SIGTERM every group we started, then SIGKILL what is left after a short grace."""
    for pgid in list(_LIVE_GROUPS):
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    while _LIVE_GROUPS and time.monotonic() < deadline:
        for pgid in list(_LIVE_GROUPS):
            if not _group_alive(pgid):
                _LIVE_GROUPS.pop(pgid, None)
        time.sleep(0.02)
    for pgid in list(_LIVE_GROUPS):
        _signal_group(pgid, signal.SIGKILL)
        _LIVE_GROUPS.pop(pgid, None)


atexit.register(_kill_live_groups)


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _group_alive(pgid: int) -> bool:
    return _signal_group(pgid, 0)


async def _wait_group_gone(pgid: int, timeout: float) -> None:
    """Killed helpers linger as zombies until init reaps them; the stop is done when the group is empty."""
    deadline = time.monotonic() + timeout
    while _group_alive(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _exit_words(returncode: int) -> tuple[str, str, str]:
    """(code=…, status=…, Result=) for a return code the way systemd words them."""
    if returncode < 0:
        sig = signal.Signals(-returncode)
        return "killed", f"{-returncode}/{sig.name.removeprefix('SIG')}", "signal"
    return "exited", f"{returncode}/{EXIT_NAMES.get(returncode, 'n/a')}", "exit-code"


def _restart_wanted(policy: str, returncode: int) -> bool:
    """Restart= for a failed main process (a clean exit never gets here)."""
    return policy in ("on-failure", "always") or (policy == "on-abnormal" and returncode < 0)


@dataclass
class _Child:
    """One running main process and the tasks that pump its output and wait for its exit."""

    proc: asyncio.subprocess.Process
    spec: ServiceSpec
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    waiter: asyncio.Task[None] | None = None
    stopping: bool = False
    stop_timed_out: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid


@dataclass
class _State:
    active: str = "inactive"
    sub: str = "dead"
    result: str = ""
    exec_main_status: int | None = None
    main_pid: int | None = None
    n_restarts: int = 0
    active_enter: datetime | None = None


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
    ) -> None:
        self.workspace = Path(workspace)
        self.unit_name = unit_name
        self.stop_timeout_s = stop_timeout_s
        self.units = UnitHistory(self.workspace / "units" / unit_name)
        self.journal_store = JournalStore(self.workspace / "journal.jsonl")
        self.state_file = self.workspace / "run" / f"{unit_name}.json"
        self.info = HostInfo(
            name=name,
            kind="local",
            address="localhost",
            unit=unit_name,
            unit_path=str(self.units.unit_path),
            base_url=base_url,
            extra={"workspace": str(self.workspace)},
        )
        self._state = _State()
        self._child: _Child | None = None
        self._loaded: ServiceSpec | None = None
        self._restart_times: list[float] = []
        self._auto_restart: asyncio.Task[None] | None = None
        self._op_lock: asyncio.Lock | None = None
        self._ready = False

    # -- lifecycle -------------------------------------------------------------------------------

    async def connect(self) -> None:
        self._ensure_ready()

    async def close(self) -> None:
        """Stop the service if this host runs it; nothing is left behind."""
        if self._auto_restart is not None:
            self._auto_restart.cancel()
        if self._child is not None:
            await self._stop_child(self._child)

    def _ensure_ready(self) -> None:
        if self._ready:
            return
        self.units.unit_path.parent.mkdir(parents=True, exist_ok=True)
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        self._reap_orphan()
        self._ready = True

    def _lock(self) -> asyncio.Lock:
        if self._op_lock is None:
            self._op_lock = asyncio.Lock()
        return self._op_lock

    # -- unit file -------------------------------------------------------------------------------

    async def read_unit(self) -> str:
        self._ensure_ready()
        return self.units.read_text()

    async def push(self, text: str) -> PushResult:
        """Validate, then atomically replace the unit; the running service is untouched until restart."""
        self._ensure_ready()
        try:
            load_spec(self.unit_name, text)
        except UnitSyntaxError as err:
            raise UnitRejected(f"{self.unit_name} was not pushed: {err}", "fix the unit and push again") from None
        changed, backup = self.units.push(text)
        return PushResult(unit=self.unit_name, changed=changed, backup=backup)

    async def history(self) -> list[int]:
        return self.units.numbers()

    async def rollback(self) -> str:
        self._ensure_ready()
        text = self.units.rollback()
        self._daemon_reload(text)
        return text

    def _daemon_reload(self, text: str) -> ServiceSpec:
        """Load the unit text as systemd would; a unit that cannot run is refused in words."""
        try:
            self._loaded = load_spec(self.unit_name, text)
        except UnitSyntaxError as err:
            raise UnitRejected(f"{self.unit_name} cannot be loaded: {err}", "fix the unit, push, restart") from None
        return self._loaded

    # -- service ---------------------------------------------------------------------------------

    async def status(self) -> ServiceStatus:
        self._ensure_ready()
        foreign = self._foreign_owner() if self._child is None else None
        if foreign is not None:
            return ServiceStatus(
                unit=self.unit_name, active_state="active", sub_state="running", main_pid=foreign.get("main_pid")
            )
        s = self._state
        return ServiceStatus(
            unit=self.unit_name,
            active_state=s.active,
            sub_state=s.sub,
            main_pid=s.main_pid,
            exec_main_status=s.exec_main_status,
            n_restarts=s.n_restarts,
            active_enter=s.active_enter,
            result=s.result,
        )

    async def restart(self) -> RestartResult:
        """daemon-reload, stop what runs, start the freshly loaded unit."""
        self._ensure_ready()
        async with self._lock():
            spec = self._daemon_reload(self.units.read_text())
            if self._auto_restart is not None:
                self._auto_restart.cancel()
                self._auto_restart = None
            if self._child is not None:
                await self._stop_child(self._child)
            await self._stop_foreign()
            self._state.n_restarts = 0  # a manual (re)start resets the automatic-restart counter
            self._restart_times.clear()
            started = await self._spawn(spec)
            return RestartResult("done" if started else "failed", await self.status())

    async def stop(self) -> None:
        self._ensure_ready()
        async with self._lock():
            if self._auto_restart is not None:
                self._auto_restart.cancel()
                self._auto_restart = None
                self._set_state("inactive", "dead")
            if self._child is not None:
                await self._stop_child(self._child)
            await self._stop_foreign()

    async def gpu_facts(self) -> list[GpuFact]:
        return []  # the demo has no GPUs; the panel shows the sim's facts from /server_info instead

    def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        return self.journal_store.iterate(after_cursor=after_cursor, follow=follow, lines=lines)

    # -- process supervision ---------------------------------------------------------------------

    def _log(self, message: str, priority: int = 6) -> None:
        self.journal_store.append(message, priority=priority, pid=SYSTEMD_PID)

    def _set_state(self, active: str, sub: str, **changes: object) -> None:
        self._state.active, self._state.sub = active, sub
        for key, value in changes.items():
            setattr(self._state, key, value)

    def _spawn_failure(self, spec: ServiceSpec, lines: list[str], code: int) -> bool:
        for line in lines:
            self._log(f"{self.unit_name}: {line}", priority=3)
        code_word, status_word, result = _exit_words(code)
        self._log(f"{self.unit_name}: Main process exited, code={code_word}, status={status_word}", priority=5)
        self._log(f"{self.unit_name}: Failed with result '{result}'.", priority=4)
        self._log(f"Failed to start {spec.display_name}.", priority=3)
        self._set_state("failed", "failed", result=result, exec_main_status=code, main_pid=None)
        return False

    async def _spawn(self, spec: ServiceSpec) -> bool:
        """Start ExecStart in its own process group; False (unit failed) when it cannot be spawned."""
        self._set_state("activating", "start", result="", exec_main_status=None)
        argv = spec.resolved_argv()
        env = {**os.environ, **spec.environment}
        cwd = spec.working_directory
        if cwd and not Path(cwd).is_dir():
            return self._spawn_failure(spec, [f"Changing to the requested working directory failed: {cwd}"], 200)
        exe = shutil.which(argv[0], path=env.get("PATH")) if os.sep not in argv[0] else argv[0]
        if exe is None or not os.access(exe, os.X_OK):
            return self._spawn_failure(
                spec,
                [f"Failed to locate executable {argv[0]}: No such file or directory",
                 f"Failed at step EXEC spawning {argv[0]}: No such file or directory"],
                203,
            )  # fmt: skip
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), exe, *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                limit=READ_LIMIT,
            )  # fmt: skip
        except OSError as err:
            return self._spawn_failure(spec, [f"Failed to spawn {argv[0]}: {err.strerror}"], 203)
        _LIVE_GROUPS[proc.pid] = self.stop_timeout_s
        child = _Child(proc=proc, spec=spec)
        self._child = child
        self._write_state_file(proc.pid)
        self._log(f"Started {spec.display_name}.")
        self._set_state("active", "running", main_pid=proc.pid, active_enter=datetime.now().astimezone())
        assert proc.stdout is not None and proc.stderr is not None
        child.tasks = [
            asyncio.create_task(self._pump(proc.stdout, proc.pid, is_stderr=False)),
            asyncio.create_task(self._pump(proc.stderr, proc.pid, is_stderr=True)),
        ]
        child.waiter = asyncio.create_task(self._watch(child))
        return True

    async def _pump(self, stream: asyncio.StreamReader, pid: int, *, is_stderr: bool) -> None:
        """Copy one output stream into the journal, a line at a time, timestamped as read."""
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # a line longer than the limit: take what is buffered
                raw = await stream.read(READ_LIMIT)
            if not raw:
                return
            message = redact_text(raw.decode("utf-8", errors="replace").rstrip("\r\n"))  # SGLang logs its api_key
            priority = 3 if is_stderr and ERRORISH.search(message) else 6
            self.journal_store.append(message, priority=priority, pid=pid)

    async def _watch(self, child: _Child) -> None:
        """Wait for the main process, kill its stragglers (like KillMode=control-group), record the exit."""
        returncode = await child.proc.wait()
        _signal_group(child.pid, signal.SIGKILL)
        await asyncio.gather(*child.tasks, return_exceptions=True)
        await _wait_group_gone(child.pid, GROUP_GONE_TIMEOUT_S)
        _LIVE_GROUPS.pop(child.pid, None)
        self._remove_state_file(child.pid)
        if self._child is child:
            self._child = None
        self._record_exit(child, returncode)

    def _record_exit(self, child: _Child, returncode: int) -> None:
        spec, unit = child.spec, self.unit_name
        clean = returncode == 0 or (child.stopping and returncode == -signal.SIGTERM) or spec.ignore_failure
        if child.stop_timed_out:
            self._log(f"{unit}: Main process exited, code=killed, status=9/KILL", priority=5)
            self._log(f"{unit}: Failed with result 'timeout'.", priority=4)
            self._log(f"Stopped {spec.display_name}.")
            self._set_state("failed", "failed", result="timeout", exec_main_status=None, main_pid=None)
            return
        if clean:
            self._log(f"{unit}: Deactivated successfully.")
            if child.stopping:
                self._log(f"Stopped {spec.display_name}.")
            self._set_state("inactive", "dead", result="success", exec_main_status=max(returncode, 0), main_pid=None)
            return
        code_word, status_word, result = _exit_words(returncode)
        self._log(f"{unit}: Main process exited, code={code_word}, status={status_word}", priority=5)
        self._log(f"{unit}: Failed with result '{result}'.", priority=4)
        status = returncode if returncode > 0 else -returncode
        self._set_state("failed", "failed", result=result, exec_main_status=status, main_pid=None)
        if not child.stopping and _restart_wanted(spec.restart, returncode):
            self._schedule_auto_restart(spec)

    def _schedule_auto_restart(self, spec: ServiceSpec) -> None:
        now = time.monotonic()
        self._restart_times = [t for t in self._restart_times if now - t < spec.start_limit_interval_s]
        if len(self._restart_times) >= spec.start_limit_burst:
            self._log(f"{self.unit_name}: Start request repeated too quickly.", priority=4)
            self._log(f"{self.unit_name}: Failed with result 'start-limit-hit'.", priority=4)
            self._log(f"Failed to start {spec.display_name}.", priority=3)
            self._set_state("failed", "failed", result="start-limit-hit")
            return
        self._restart_times.append(now)
        self._set_state("activating", "auto-restart")
        self._auto_restart = asyncio.create_task(self._auto_restart_after(spec))

    async def _auto_restart_after(self, spec: ServiceSpec) -> None:
        await asyncio.sleep(spec.restart_sec)
        async with self._lock():
            self._auto_restart = None
            self._state.n_restarts += 1
            self._log(f"{self.unit_name}: Scheduled restart job, restart counter is at {self._state.n_restarts}.")
            self._log(f"Stopped {spec.display_name}.")
            await self._spawn(spec)  # the LOADED spec, not the file on disk

    async def _stop_child(self, child: _Child) -> None:
        """SIGTERM to the whole group, SIGKILL after the stop timeout; returns once it is reaped."""
        assert child.waiter is not None
        if not child.stopping:
            child.stopping = True
            self._log(f"Stopping {child.spec.display_name}...")
            self._set_state("deactivating", "stop-sigterm")
            _signal_group(child.pid, signal.SIGTERM)
        timeout = child.spec.timeout_stop_s if child.spec.timeout_stop_s is not None else self.stop_timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(child.waiter), timeout)
        except TimeoutError:
            child.stop_timed_out = True
            self._log(f"{self.unit_name}: State 'stop-sigterm' timed out. Killing.", priority=4)
            self._log(f"{self.unit_name}: Killing process {child.pid} with signal SIGKILL.", priority=4)
            _signal_group(child.pid, signal.SIGKILL)
            await asyncio.shield(child.waiter)

    # -- a service left by another panel process -------------------------------------------------

    def _write_state_file(self, pid: int) -> None:
        write_atomic(self.state_file, orjson.dumps({"owner": os.getpid(), "main_pid": pid, "pgid": pid}))

    def _read_state_file(self) -> dict | None:
        try:
            return orjson.loads(self.state_file.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return None

    def _remove_state_file(self, pid: int) -> None:
        record = self._read_state_file()
        if record is not None and record.get("pgid") == pid:
            self.state_file.unlink(missing_ok=True)

    def _foreign_owner(self) -> dict | None:
        """The state record when another live panel process runs this service."""
        record = self._read_state_file()
        if record and record.get("owner") != os.getpid() and _pid_alive(int(record["owner"])):
            if _group_alive(int(record["pgid"])):
                return record
        return None

    def _reap_orphan(self) -> None:
        """Kill a service whose panel died without stopping it (so no process is ever left behind)."""
        record = self._read_state_file()
        if not record or record.get("owner") == os.getpid() or _pid_alive(int(record.get("owner", 0))):
            return
        pgid = int(record.get("pgid", 0))
        if pgid and _signal_group(pgid, signal.SIGKILL):
            self._log(f"{self.unit_name}: Killing left-over process group {pgid} of a panel that exited.", 4)
        self.state_file.unlink(missing_ok=True)

    async def _stop_foreign(self) -> None:
        """Stop the service another live panel process runs (as `systemctl stop` would)."""
        record = self._foreign_owner()
        if record is None:
            return
        pgid = int(record["pgid"])
        self._log(f"Stopping {self.unit_name} (run by panel process {record['owner']})...")
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout_s
        while _group_alive(pgid):
            if time.monotonic() > deadline:
                _signal_group(pgid, signal.SIGKILL)
            await asyncio.sleep(0.05)
        self._log(f"Stopped {self.unit_name}.")
