"""`bench --host NAME --record` stopped by Ctrl-C or SIGTERM keeps the levels it finished as a cancelled trial of
the host's session (the panel's b and the CLI's sweep keep a cancelled trial too): it recorded nothing, and the
minutes of levels already measured were lost (a newcomer's SIGTERM to `bench --host demo --record`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import orjson
import pytest

from specdec_tui.core.paths import demo_dir, sessions_dir
from specdec_tui.core.session import load_session
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

pytestmark = pytest.mark.timeout(240)


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True, timeout=200)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_bench_record_keeps_its_finished_levels_as_a_cancelled_trial(sig: signal.Signals) -> None:
    ensure_demo_workspace(demo_dir(), time_scale=20)
    try:
        assert cli("host", "restart", "--host", "demo").returncode == 0
        proc = subprocess.Popen([sys.executable, "-m", "specdec_tui", "bench", "--host", "demo", "--record", "--json",
                                 "--concurrency", "64,1", "--requests", "4000", "--max-tokens", "16"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        assert proc.stdout is not None
        # the c=64 level, done in seconds; c=1 then runs for ~40 s (the signal lands in it, also on a loaded machine)
        first = orjson.loads(proc.stdout.readline())
        assert first["concurrency"] == 64, first
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + sig, err
        assert "Traceback" not in err, err
        (path,) = sorted(sessions_dir().glob("*.toml"))
        (trial,) = load_session(path).trials
        assert trial.status == "cancelled"
        assert [lv.concurrency for lv in trial.levels][:1] == [64]
        assert f"recorded as trial 1 (cancelled) in {path}" in err, err
    finally:
        cli("host", "stop", "--host", "demo")
