"""`bench --find-max-rate --record` (issue 33): the probes become one trial of the host's session, as the panel's
rate search records them (loop.rate_search.search_max_rate, the one owner) — on the real demo host."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest

from specdec_tui.core.paths import demo_dir, sessions_dir
from specdec_tui.core.session import load_session
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

pytestmark = pytest.mark.timeout(240)


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True,
                          timeout=200, env={**os.environ, "COLUMNS": "200"})


def test_find_max_rate_with_record_keeps_the_probes_as_one_trial_of_the_session() -> None:
    ensure_demo_workspace(demo_dir(), time_scale=50)
    try:
        assert cli("host", "restart", "--host", "demo").returncode == 0
        done = cli("bench", "--host", "demo", "--find-max-rate", "--slo", "ttft_p99=300ms", "--rate", "20",
                   "--requests", "40", "--max-tokens", "16", "--record", "--json")
        assert done.returncode == 0, done.stderr
        lines = [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()]
        answer, probes = lines[-1], [x for x in lines if x.get("probe")]
        assert answer["probes"] == len(probes) >= 2  # the last JSON line is still the answer
        files = sorted(sessions_dir().glob("*.toml"))
        assert len(files) == 1, files
        assert f"recorded as trial 1 ({len(probes)} probes) in {files[0]}" in done.stderr
        (trial,) = load_session(files[0]).trials
        assert trial.status == "ok"
        assert [lv.rate for lv in trial.levels] == pytest.approx([p["rate"] for p in probes], abs=0.01)
        assert trial.label == f"max rate ≈ {answer['max_rate']:.3g}/s (ttft_p99≤300ms)"  # the panel's label
        assert trial.profile.slo == ("ttft_p99=300ms",) and "--speculative-num-steps" in trial.unit_text
        assert trial.facts is not None and trial.facts.max_running_requests
    finally:
        cli("host", "stop", "--host", "demo")
