"""The local unit's state record, `<workspace>/run/<unit>.json`: systemd's view of one service, on disk.

Why a file: the supervisor that runs the service outlives the command that started it, so every
`LocalHost` (any process) learns the state by reading what the supervisor last wrote. Only the
supervisor writes it while it lives; a host rewrites it only after finding the supervisor dead.
"""

from __future__ import annotations

import dataclasses
import signal
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.hosts.local.procs import cmdline_has, group_alive, pid_running

if TYPE_CHECKING:
    from specdec_tui.hosts.base import ServiceStatus

SUPERVISOR_MODULE = "specdec_tui.hosts.local.supervisor"
SYSTEMD_PID = 1  # systemd's own journal lines carry _PID=1, as on a real host
FINAL_STATES = ("inactive", "failed")
EXIT_NAMES = {
    1: "FAILURE", 2: "INVALIDARGUMENT", 3: "NOTIMPLEMENTED", 4: "NOPERMISSION", 5: "NOTINSTALLED",
    6: "NOTCONFIGURED", 7: "NOTRUNNING", 200: "CHDIR", 203: "EXEC",
}  # fmt: skip


@dataclass
class ServiceState:
    """What `systemctl show` would print for the unit, plus who runs it (pids) and who owns it."""

    unit: str
    active_state: str = "inactive"
    sub_state: str = "dead"
    result: str = ""
    exec_main_status: int | None = None
    main_pid: int | None = None
    pgid: int | None = None
    n_restarts: int = 0
    active_enter: str | None = None  # ISO timestamp (ActiveEnterTimestamp)
    supervisor_pid: int | None = None
    owner_pid: int | None = None  # the panel whose exit stops the service; None: it keeps running
    start_id: str = ""  # which restart started this supervisor
    start_job: str = ""  # the restart job's result: "done" once ExecStart was spawned, "failed" if it could not be
    stop_timeout_s: float | None = None  # None: infinity

    @property
    def is_final(self) -> bool:
        return self.active_state in FINAL_STATES

    def supervisor_running(self) -> bool:
        pid = self.supervisor_pid
        if not pid:
            return False
        return pid_running(pid) and cmdline_has(pid, SUPERVISOR_MODULE.encode())

    def service_alive(self) -> bool:
        return group_alive(self.pgid)

    def to_status(self) -> ServiceStatus:
        from specdec_tui.hosts.base import ServiceStatus  # not on the demo's first frame: the workspace reads this module

        return ServiceStatus(
            unit=self.unit,
            active_state=self.active_state,
            sub_state=self.sub_state,
            main_pid=self.main_pid,
            exec_main_status=self.exec_main_status,
            n_restarts=self.n_restarts,
            active_enter=datetime.fromisoformat(self.active_enter) if self.active_enter else None,
            result=self.result,
        )


def state_path(workspace: Path, unit: str) -> Path:
    return Path(workspace) / "run" / f"{unit}.json"


def read_state(path: Path) -> ServiceState | None:
    """The record, or None when there is none (or it is unreadable: treated as never started)."""
    import orjson  # here: the panel imports this module before its first frame, and orjson with json costs ~2 ms

    try:
        row = orjson.loads(path.read_bytes())
        known = {f.name for f in dataclasses.fields(ServiceState)}
        return ServiceState(**{k: v for k, v in row.items() if k in known})
    except (FileNotFoundError, orjson.JSONDecodeError, TypeError):
        return None


def write_state(path: Path, state: ServiceState) -> None:
    import orjson

    write_atomic(path, orjson.dumps(dataclasses.asdict(state)))


def service_running(workspace: Path, unit: str) -> bool:
    """True when the workspace's service runs now (its port is ours, not taken by a stranger)."""
    state = read_state(state_path(workspace, unit))
    return state is not None and not state.is_final and (state.supervisor_running() or state.service_alive())


def exit_words(returncode: int) -> tuple[str, str, str]:
    """(code=…, status=…, Result=) for a return code the way systemd words them."""
    if returncode < 0:
        sig = signal.Signals(-returncode)
        return "killed", f"{-returncode}/{sig.name.removeprefix('SIG')}", "signal"
    return "exited", f"{returncode}/{EXIT_NAMES.get(returncode, 'n/a')}", "exit-code"
