"""The local unit's supervisor: what systemd does for one service, as a process of its own.

`python -m specdec_tui.hosts.local.supervisor WORKSPACE UNIT --start-id ID [--owner PID]` runs the
unit text `LocalHost.restart` loaded (given on stdin, read before anything else): it spawns ExecStart in its own process
group, pumps its stdout/stderr into the workspace journal, keeps `run/<unit>.json` up to date, honours
Restart=, stops the service on SIGTERM (SIGTERM to the group, SIGKILL after TimeoutStopSec) and exits
when the service is over. Why a separate process: the service must outlive the command that started
it, like a real systemd unit. With `--owner`, it is a panel's service: when that process dies (even by
SIGKILL) the supervisor stops the service and exits, so a panel never leaves a server behind.
"""

from __future__ import annotations

import argparse
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import IO

from specdec_tui.core.redact import redact_text
from specdec_tui.core.unit_errors import UnitSyntaxError
from specdec_tui.hosts.local.journal import JournalStore
from specdec_tui.hosts.local.prctl import become_subreaper, die_with_parent
from specdec_tui.hosts.local.procs import group_alive, pid_running, signal_group
from specdec_tui.hosts.local.spec import ServiceSpec, load_spec
from specdec_tui.hosts.local.state import (
    SYSTEMD_PID,
    ServiceState,
    exit_words,
    state_path,
    write_state,
)

ERRORISH = re.compile(r"(error|exception|traceback|fatal|critical|errno)\b", re.IGNORECASE)
READ_LIMIT = 4 * 1024 * 1024  # a longer line is cut into pieces of this size
TICK_S = 0.2  # how often the owner is checked when nothing else happens
BUSY_TICK_S = 0.02  # while stopping or draining a finished service
GROUP_GONE_TIMEOUT_S = 5.0


def restart_wanted(policy: str, returncode: int) -> bool:
    """Restart= for a failed main process (a clean exit never gets here)."""
    return policy in ("on-failure", "always") or (policy == "on-abnormal" and returncode < 0)


class Supervisor:
    """One service's life: start, pump output, watch, restart on failure, stop."""

    def __init__(self, workspace: Path, unit: str, spec: ServiceSpec, *, start_id: str, owner_pid: int | None,
                 default_stop_timeout_s: float) -> None:  # fmt: skip
        self.unit = unit
        self.spec = spec
        self.journal = JournalStore(Path(workspace) / "journal.jsonl")
        self.state_file = state_path(workspace, unit)
        stop_timeout = spec.timeout_stop_s if spec.timeout_stop_s is not None else default_stop_timeout_s
        self.state = ServiceState(unit=unit, supervisor_pid=os.getpid(), owner_pid=owner_pid, start_id=start_id,
                                  stop_timeout_s=stop_timeout)  # fmt: skip
        self.sel = selectors.DefaultSelector()
        self.proc: subprocess.Popen[bytes] | None = None
        self.streams: dict[int, tuple[bool, bytearray]] = {}  # fd → (is stderr, partial line)
        self.files: dict[int, IO[bytes]] = {}  # fd → the pipe's file object, which owns the fd
        self.main_status: int | None = None  # the main process's return code once reaped
        self.exited_at = 0.0
        self.stop_requested = False
        self.stopping = False
        self.stop_deadline: float | None = None
        self.stop_timed_out = False
        self.restart_at: float | None = None
        self.restart_times: list[float] = []
        self.done = False

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> int:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGTERM, self._on_stop_signal)
        signal.signal(signal.SIGINT, self._on_stop_signal)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd hears of exits
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.sel.register(wake_r, selectors.EVENT_READ)
        self._spawn()
        while not self.done:
            busy = self.stopping or self.main_status is not None
            for key, _ in self.sel.select(BUSY_TICK_S if busy else TICK_S):
                if key.fd == wake_r:
                    _drain(wake_r)
                else:
                    self._pump(key.fd)
            self._reap()
            self._watch_owner()
            self._advance()
        return 0

    def _on_stop_signal(self, *_: object) -> None:
        self.stop_requested = True

    def _log(self, message: str, priority: int = 6) -> None:
        self.journal.append(message, priority=priority, pid=SYSTEMD_PID)

    def _set(self, active: str, sub: str, **changes: object) -> None:
        self.state.active_state, self.state.sub_state = active, sub
        for key, value in changes.items():
            setattr(self.state, key, value)
        write_state(self.state_file, self.state)

    # -- starting ------------------------------------------------------------------------------

    def _spawn(self) -> None:
        """Start ExecStart in its own process group; the unit fails at once when it cannot be spawned."""
        spec = self.spec
        self._set("activating", "start", result="", exec_main_status=None, main_pid=None, pgid=None)
        argv = spec.resolved_argv()
        env = {**os.environ, **spec.environment}
        cwd = spec.working_directory
        if cwd and not Path(cwd).is_dir():
            return self._spawn_failure([f"Changing to the requested working directory failed: {cwd}"], 200)
        exe = shutil.which(argv[0], path=env.get("PATH")) if os.sep not in argv[0] else argv[0]
        if exe is None or not os.access(exe, os.X_OK):
            return self._spawn_failure(
                [f"Failed to locate executable {argv[0]}: No such file or directory",
                 f"Failed at step EXEC spawning {argv[0]}: No such file or directory"],
                203,
            )  # fmt: skip
        try:
            proc = subprocess.Popen(argv, executable=exe, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True,
                                    preexec_fn=die_with_parent)  # fmt: skip
        except OSError as err:
            return self._spawn_failure([f"Failed at step EXEC spawning {argv[0]}: {err.strerror}"], 203)
        self.proc, self.main_status = proc, None
        for stream, is_stderr in ((proc.stdout, False), (proc.stderr, True)):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self.streams[stream.fileno()] = (is_stderr, bytearray())
            self.files[stream.fileno()] = stream
            self.sel.register(stream.fileno(), selectors.EVENT_READ)
        self._log(f"Started {spec.display_name}.")
        self._set("active", "running", main_pid=proc.pid, pgid=proc.pid, start_job="done",
                  active_enter=datetime.now().astimezone().isoformat())  # fmt: skip

    def _spawn_failure(self, lines: list[str], code: int) -> None:
        for line in lines:
            self._log(f"{self.unit}: {line}", priority=3)
        code_word, status_word, result = exit_words(code)
        # the state first: whoever reads "Failed with result" in the journal then sees the unit failed
        self._set("failed", "failed", result=result, exec_main_status=code, main_pid=None, pgid=None,
                  start_job=self.state.start_job or "failed")  # fmt: skip
        self._log(f"{self.unit}: Main process exited, code={code_word}, status={status_word}", priority=5)
        self._log(f"{self.unit}: Failed with result '{result}'.", priority=4)
        self._log(f"Failed to start {self.spec.display_name}.", priority=3)
        self.done = True

    # -- output ----------------------------------------------------------------------------------

    def _pump(self, fd: int) -> None:
        """Copy what the service wrote into the journal, a line at a time (a partial line waits)."""
        is_stderr, partial = self.streams[fd]
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        if data:
            partial += data
            end = partial.rfind(b"\n")
            lines = bytes(partial[: end + 1]).splitlines() if end >= 0 else []
            del partial[: end + 1]
            if len(partial) >= READ_LIMIT:
                lines.append(bytes(partial))
                partial.clear()
        else:
            lines = [bytes(partial)] if partial else []
            self._close_stream(fd)
        self._emit(lines, is_stderr)

    def _close_stream(self, fd: int) -> None:
        self.sel.unregister(fd)
        del self.streams[fd]
        self.files.pop(fd).close()

    def _emit(self, lines: list[bytes], is_stderr: bool) -> None:
        """Append lines in runs of equal priority (one locked write per run); SGLang logs its api_key."""
        pid = self.state.main_pid
        run: list[str] = []
        run_priority = 6
        for raw in lines:
            message = redact_text(raw.decode("utf-8", errors="replace").rstrip("\r"))
            priority = 3 if is_stderr and ERRORISH.search(message) else 6
            if run and priority != run_priority:
                self.journal.append_many(run, priority=run_priority, pid=pid)
                run = []
            run_priority = priority
            run.append(message)
        if run:
            self.journal.append_many(run, priority=run_priority, pid=pid)

    # -- watching --------------------------------------------------------------------------------

    def _reap(self) -> None:
        """Reap every child: the main process (its exit status) and orphans re-parented to us."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.proc is not None and pid == self.proc.pid:
                self.main_status = os.waitstatus_to_exitcode(status)
                self.proc.returncode = self.main_status
                self.exited_at = time.monotonic()
                signal_group(pid, signal.SIGKILL)  # KillMode=control-group: stragglers go with it

    def _watch_owner(self) -> None:
        owner = self.state.owner_pid
        if owner and not self.stop_requested and not pid_running(owner):
            self._log(f"{self.unit}: The panel process {owner} that started it exited; stopping it too.", 5)
            self.stop_requested = True

    def _advance(self) -> None:
        now = time.monotonic()
        if self.stop_requested and not self.stopping:
            self._begin_stop()
        if self.proc is not None:
            if self.main_status is None:
                if self.stop_deadline is not None and now > self.stop_deadline and not self.stop_timed_out:
                    self._kill_after_timeout()
                return
            drained = not self.streams and not group_alive(self.proc.pid)
            if drained or now - self.exited_at > GROUP_GONE_TIMEOUT_S:
                for fd in list(self.streams):
                    self._close_stream(fd)
                self.proc = None
                self._record_exit(self.main_status)
            return
        if self.restart_at is not None and now >= self.restart_at:
            self.restart_at = None
            self.state.n_restarts += 1
            self._log(f"{self.unit}: Scheduled restart job, restart counter is at {self.state.n_restarts}.")
            self._log(f"Stopped {self.spec.display_name}.")
            self._spawn()

    # -- stopping and exits ----------------------------------------------------------------------

    def _begin_stop(self) -> None:
        self.stopping = True
        if self.restart_at is not None:  # stopped while waiting to restart: nothing runs
            self.restart_at = None
            self._set("inactive", "dead")
            self.done = True
        elif self.proc is not None and self.main_status is None:
            self._log(f"Stopping {self.spec.display_name}...")
            self._set("deactivating", "stop-sigterm")
            signal_group(self.proc.pid, signal.SIGTERM)
            timeout = self.state.stop_timeout_s
            self.stop_deadline = time.monotonic() + timeout if timeout is not None else None
        elif self.proc is None:
            self.done = True

    def _kill_after_timeout(self) -> None:
        assert self.proc is not None
        self.stop_timed_out = True
        self._log(f"{self.unit}: State 'stop-sigterm' timed out. Killing.", priority=4)
        self._log(f"{self.unit}: Killing process {self.proc.pid} with signal SIGKILL.", priority=4)
        signal_group(self.proc.pid, signal.SIGKILL)

    def _record_exit(self, returncode: int) -> None:
        spec, unit = self.spec, self.unit
        self.done = True
        if self.stop_timed_out:
            self._set("failed", "failed", result="timeout", exec_main_status=None, main_pid=None, pgid=None)
            self._log(f"{unit}: Main process exited, code=killed, status=9/KILL", priority=5)
            self._log(f"{unit}: Failed with result 'timeout'.", priority=4)
            self._log(f"Stopped {spec.display_name}.")
            return
        if returncode == 0 or (self.stopping and returncode == -signal.SIGTERM) or spec.ignore_failure:
            self._log(f"{unit}: Deactivated successfully.")
            if self.stopping:
                self._log(f"Stopped {spec.display_name}.")
            self._set("inactive", "dead", result="success", exec_main_status=max(returncode, 0), main_pid=None,
                      pgid=None)  # fmt: skip
            return
        code_word, status_word, result = exit_words(returncode)
        status = returncode if returncode > 0 else -returncode
        # the state first: whoever reads "Failed with result" in the journal then sees the unit failed
        self._set("failed", "failed", result=result, exec_main_status=status, main_pid=None, pgid=None)
        self._log(f"{unit}: Main process exited, code={code_word}, status={status_word}", priority=5)
        self._log(f"{unit}: Failed with result '{result}'.", priority=4)
        if not self.stopping and restart_wanted(spec.restart, returncode):
            self._schedule_restart()

    def _schedule_restart(self) -> None:
        now = time.monotonic()
        spec = self.spec
        self.restart_times = [t for t in self.restart_times if now - t < spec.start_limit_interval_s]
        if len(self.restart_times) >= spec.start_limit_burst:
            self._log(f"{self.unit}: Start request repeated too quickly.", priority=4)
            self._log(f"{self.unit}: Failed with result 'start-limit-hit'.", priority=4)
            self._log(f"Failed to start {spec.display_name}.", priority=3)
            self._set("failed", "failed", result="start-limit-hit")
            return
        self.restart_times.append(now)
        self._set("activating", "auto-restart")
        self.restart_at = now + spec.restart_sec
        self.done = False


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="specdec_tui.hosts.local.supervisor", description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("unit")
    parser.add_argument("--start-id", required=True, help="token the starting LocalHost waits for")
    parser.add_argument("--owner", type=int, default=0, help="stop the service when this process dies")
    parser.add_argument("--stop-timeout", type=float, default=10.0, help="seconds when the unit sets none")
    args = parser.parse_args(argv)
    become_subreaper()
    journal = JournalStore(args.workspace / "journal.jsonl")
    try:
        spec = load_spec(args.unit, sys.stdin.buffer.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, UnitSyntaxError) as err:
        journal.append(f"{args.unit}: cannot be loaded: {err}", priority=3, pid=SYSTEMD_PID)
        write_state(state_path(args.workspace, args.unit),
                    ServiceState(unit=args.unit, active_state="failed", sub_state="failed", result="resources",
                                 start_id=args.start_id, start_job="failed"))  # fmt: skip
        return 1
    supervisor = Supervisor(args.workspace, args.unit, spec, start_id=args.start_id, owner_pid=args.owner or None,
                            default_stop_timeout_s=args.stop_timeout)  # fmt: skip
    try:
        return supervisor.run()
    except BaseException as err:  # never leave the service running unsupervised
        if supervisor.proc is not None:
            signal_group(supervisor.proc.pid, signal.SIGKILL)
        supervisor._log(f"{args.unit}: supervisor failed ({type(err).__name__}: {err}); the service was killed.", 3)
        supervisor._set("failed", "failed", result="resources", main_pid=None, pgid=None)
        raise


if __name__ == "__main__":
    sys.exit(main())
