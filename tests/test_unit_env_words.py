"""Issue 36, point 5: an edit of a flag changes the words argparse gives that flag and nothing else: an
environment expansion after its value (`$EXTRA_ARGS`) or on a line of its own (`${OPTS}`) stays, in `unit set`,
the panel's edits and a sweep (they share `core.exec_start`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.session import load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.sweep import run_sweep
from specdec_tui.loop.sweep_plan import SweepPlan
from specdec_tui.loop.trial import TrialLoop

pytestmark = pytest.mark.timeout(240)

UNIT = """[Service]
Environment="EXTRA_ARGS=--log-level info"
ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m \\
    --speculative-num-steps 3 $EXTRA_ARGS \\
    --cuda-graph-bs 1 2 4 $MORE \\
    --tp 2 \\
    --enable-metrics ${SWITCHES} \\
    ${OPTS}
"""


def test_unit_set_keeps_the_environment_words_after_and_below_the_values(tmp_path: Path) -> None:
    path = tmp_path / "sglang.service"
    path.write_text(UNIT)
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "unit", "set", str(path), "speculative-num-steps=5",
                           "cuda-graph-bs=8 16", "tp=4", "--unset", "enable-metrics"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == UNIT.replace("steps 3 $EXTRA", "steps 5 $EXTRA").replace("bs 1 2 4 $MORE", "bs 8 16 $MORE") \
        .replace("--tp 2", "--tp 4").replace("--enable-metrics ${SWITCHES}", "${SWITCHES}")
    assert UnitFile.parse(UNIT).flags() == {"model-path": "/m", "speculative-num-steps": "3",
                                            "cuda-graph-bs": "1 2 4", "tp": "2", "enable-metrics": None}


def test_a_one_value_flag_takes_an_environment_word_as_its_value() -> None:
    unit = UnitFile.parse(UNIT.replace("--model-path /m", "--model-path $MODEL"))
    assert unit.get_flag("model-path") == "$MODEL"
    assert "--model-path /other \\" in unit.set_flag("model-path", "/other").text


async def test_a_sweep_keeps_extra_args_and_the_server_gets_them(demo_runner: TrialLoop) -> None:
    original = await demo_runner.read_running()
    lines = original.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "--speculative-num-steps" in line)
    lines[at] = lines[at].replace(" \\", " $EXTRA_ARGS \\")
    at = next(i for i, line in enumerate(lines) if line.startswith("ExecStart="))
    lines.insert(at, "Environment=\"EXTRA_ARGS=--max-running-requests 7\"\n")
    base = "".join(lines)
    await demo_runner.push_and_restart(base)
    outcome = await run_sweep(demo_runner, base, SweepPlan("speculative-num-steps", ("2", "3"), repeats=1,
                                                           stop_after_worse=False))
    trials = [t for t in load_session(demo_runner.session_path).trials if t.sweep]
    assert [t.sweep["value"] for t in trials] == ["2", "3"] and [t.status for t in trials] == ["ok", "ok"]
    for trial in trials:
        assert f"--speculative-num-steps {trial.sweep['value']} $EXTRA_ARGS \\" in trial.unit_text
        assert trial.facts is not None and trial.facts.max_running_requests == 7  # the server got EXTRA_ARGS
    assert await demo_runner.host.read_unit() == base == outcome.final_unit_text
