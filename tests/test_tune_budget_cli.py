"""`tune --budget N` launches at most N servers, the adaptive check included (it printed "at most 1 launches"
and then launched a second server to check the adaptive tiers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(150)


def test_budget_one_is_one_launch() -> None:
    tune = subprocess.run([sys.executable, "-m", "specdec_tui", "tune", "--host", "demo", "--space",
                           "speculative-num-steps=1,2", "--slo", "ttft_p99=2s", "--concurrency", "1",
                           "--budget", "1", "--json"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert tune.returncode == 0, tune.stderr
    assert "at most 1 launches" in tune.stderr
    report = json.loads(tune.stdout.splitlines()[-1])
    assert report["launches"] == 1
    assert tune.stderr.count("· restart") == 1  # one server started by the tune (then the unit restored)
