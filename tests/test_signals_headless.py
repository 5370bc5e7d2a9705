"""Issue 36, point 7: SIGTERM or SIGHUP to a headless `sweep` or `demo` is an interrupt, as Ctrl+C is: the unit
that ran before is back on the host, the trial under way is recorded cancelled (never left "running"), and the
command exits non-zero. Real signals to the real `specdec-tui` process on the demo host."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.paths import demo_dir, sessions_dir
from specdec_tui.core.session import load_session
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

pytestmark = pytest.mark.timeout(300)


def start(*argv: str, sigint: signal.Handlers = signal.SIG_DFL) -> subprocess.Popen[str]:
    """The real command; `sigint` is what it inherits for SIGINT (SIG_IGN: as a shell starts a background job)."""
    return subprocess.Popen([sys.executable, "-m", "specdec_tui", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))


def wait_for_line(proc: subprocess.Popen[str], marker: str) -> list[str]:
    """stderr lines up to and including the first that holds `marker` (the process is then mid-trial)."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if marker in line:
            return seen
    raise AssertionError(f"{marker!r} never said; stderr: {''.join(seen)}")


def children_of(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.mark.parametrize(("sig", "sigint"), [(signal.SIGTERM, signal.SIG_DFL), (signal.SIGHUP, signal.SIG_DFL),
                                             (signal.SIGTERM, signal.SIG_IGN)])
def test_a_signal_during_a_sweep_restores_the_unit_and_cancels_the_trial(sig: signal.Signals,
                                                                         sigint: signal.Handlers) -> None:
    ws = ensure_demo_workspace(demo_dir(), time_scale=25)
    unit_file = Path(ws.root) / "units" / ws.unit_name
    before = unit_file.read_text()
    try:
        sweep = start("sweep", "--host", "demo", "--values", "2,3", "--repeats", "1", "--concurrency", "1,2",
                      "--requests", "200", "--max-tokens", "256", sigint=sigint)
        wait_for_line(sweep, "waiting for /health")  # the first value is pushed and its server starting
        assert unit_file.read_text() != before  # the host runs the experimental unit now
        os.kill(sweep.pid, sig)
        _, err = sweep.communicate(timeout=120)
        assert sweep.returncode == 128 + sig, err
        assert f"interrupted ({sig.name})" in err and "Traceback" not in err
        assert unit_file.read_text() == before  # restored, byte for byte
        (path,) = sorted(sessions_dir().glob("*.toml"))
        trials = load_session(path).trials
        assert trials and trials[-1].status == "cancelled" and all(t.status != "running" for t in trials)
    finally:
        subprocess.run([sys.executable, "-m", "specdec_tui", "host", "stop", "--host", "demo"], capture_output=True,
                       timeout=120)


def test_sigterm_during_the_demo_cancels_its_trial_and_leaves_no_process() -> None:
    from specdec_tui.hosts.local.state import read_state, state_path

    from .proc_helpers import group_alive, running

    ws = ensure_demo_workspace(demo_dir(), time_scale=25)
    demo = start("demo", "--concurrency", "1,2", "--requests", "300", "--max-tokens", "256")
    wait_for_line(demo, "· bench")  # the trial is being measured
    state = read_state(state_path(Path(ws.root), ws.unit_name))
    assert state is not None and running(state.supervisor_pid) and group_alive(state.pgid)
    helpers = children_of(demo.pid)
    demo.send_signal(signal.SIGTERM)
    _, err = demo.communicate(timeout=120)
    assert demo.returncode == 128 + signal.SIGTERM, err
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
    (path,) = sorted(sessions_dir().glob("*.toml"))
    assert [t.status for t in load_session(path).trials] == ["cancelled"]
    assert not running(state.supervisor_pid) and not group_alive(state.pgid)  # the demo's server stopped with it
    assert not [pid for pid in helpers if running(pid)]
