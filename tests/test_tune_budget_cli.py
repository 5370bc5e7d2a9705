"""`tune --budget N` launches at most N servers, the adaptive check included (it printed "at most 1 launch"
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
    assert "at most 1 launch;" in tune.stderr  # the count in words ("1 launches" before)
    report = json.loads(tune.stdout.splitlines()[-1])
    assert report["launches"] == 1
    assert tune.stderr.count("· restart") == 1  # one server started by the tune (then the unit restored)


@pytest.mark.parametrize(("option", "said"), [
    (["--budget", "100000000", "--concurrency", "1"], "--budget: between 1 and 1,000 launches (not 100,000,000)"),
    (["--concurrency", ",".join(str(c) for c in range(1, 4001))], "--concurrency: at most 16 levels (not 4,000)"),
])
def test_a_budget_or_levels_too_large_to_run_are_refused_before_anything_launches(option: list[str], said: str) -> None:
    tune = subprocess.run([sys.executable, "-m", "specdec_tui", "tune", "--host", "demo", "--space",
                           "speculative-num-steps=1,2", "--slo", "ttft_p99=2s", *option],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert tune.returncode != 0 and said in tune.stderr, tune.stderr
    assert "Traceback" not in tune.stderr and "tuning on" not in tune.stderr and "· restart" not in tune.stderr
