"""`session show` of a session whose trials ran different settings lists which trials ran which: two trials that
differed only in their concurrency levels (the panel's `b` beside the headless `demo`) were listed as two identical
lines under "trials ran 2 different settings"."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, save_session
from tests.tmux_session import program

from .ui_helpers import OFFLINE_UNIT


def test_trials_whose_settings_differ_beyond_the_short_words_are_told_apart(tmp_path: Path) -> None:
    wide = BenchProfile(max_tokens=128, temperature=0.7, ignore_eos=True)
    narrow = dataclasses.replace(wide, concurrency=(1, 4, 16))
    trials = [Trial(id=i, unit_text=OFFLINE_UNIT, status="ok", label=f"t{i}", profile=profile,
                    levels=[LevelResult(concurrency=1, requests=4, output_tok_s=100.0 + i)])
              for i, profile in ((1, wide), (2, narrow), (3, narrow))]
    path = tmp_path / "s.toml"
    save_session(Session(host="demo", unit="sglang-demo.service", trials=trials), path)
    done = subprocess.run([*program(), "session", "show", str(path)], capture_output=True, text=True, timeout=60,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("trial 1:", "trials 2, 3:"))]
    assert len(lines) == 2 and lines[0].split(":", 1)[1] != lines[1].split(":", 1)[1], done.stdout
    assert "concurrency 1,4,16,32,64" in lines[0] and "concurrency 1,4,16" in lines[1], lines
