"""A trial left "running" by a process killed with SIGKILL (no handler runs, nothing is flushed) is read as
interrupted, its finished levels kept, and the next start — `session show`, the panel — says so once, in words;
a trial another live process is running is left running. Real processes, real SIGKILL."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specdec_tui.cli.tui_cmd import offline_app
from specdec_tui.core.config import Config
from specdec_tui.core.paths import demo_dir, sessions_dir
from specdec_tui.core.session import load_session
from specdec_tui.core.trial_writer import INTERRUPTED
from specdec_tui.hosts.local.workspace import ensure_demo_workspace

from .ui_helpers import record_notifications

pytestmark = pytest.mark.timeout(240)

# A writer as the panel's trial loop is one: a trial started by `TrialLoop.start_trial`, a level saved, then it
# waits (as a benchmark's next level does) until killed.
WRITER = """
import sys, time
from pathlib import Path
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, save_session
from specdec_tui.core.trial_writer import this_writer
from specdec_tui.core.session import Trial
path = Path(sys.argv[1])
earlier = [Trial(id=i, unit_text="u", status="ok") for i in range(1, int(sys.argv[2]) + 1)]
trial = Trial(id=len(earlier) + 1, unit_text="u", label="steps=3", writer=this_writer(),
              levels=[LevelResult(concurrency=4, requests=8)])
save_session(Session(host="h", unit="u.service", trials=[*earlier, trial]), path)
print("saved", flush=True)
time.sleep(600)
"""


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True, timeout=120)


def start_writer(path: Path, earlier: int = 0) -> subprocess.Popen[str]:
    """The writer's trial comes after `earlier` finished ones."""
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(earlier)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "saved\n"
    return child


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(30)


def test_a_trial_a_live_process_runs_stays_running_and_one_whose_process_was_killed_is_interrupted(
        tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    child = start_writer(path)
    try:
        (trial,) = load_session(path).trials  # its writer lives (a second panel): not called interrupted
        assert trial.status == "running" and not trial.failure
        assert "interrupted" not in cli("session", "show", str(path)).stdout
    finally:
        kill(child)
    session = load_session(path)
    (trial,) = session.trials
    assert (trial.status, trial.failure) == ("cancelled", INTERRUPTED)
    assert [lv.concurrency for lv in trial.levels] == [4]  # what it finished is kept
    assert session.interrupted == [1]
    shown = cli("session", "show", str(path)).stdout
    assert shown.count("interrupted: the process that ran it ended without finishing it (killed?)") == 1, shown


def test_a_demo_killed_mid_benchmark_is_shown_as_interrupted_with_the_levels_it_finished() -> None:
    """The attacker's case: the real `specdec-tui demo` (as `--demo --headless`), SIGKILL once a level is saved."""
    ensure_demo_workspace(demo_dir(), time_scale=20)
    proc = subprocess.Popen([sys.executable, "-m", "specdec_tui", "demo", "--time-scale", "20", "--concurrency",
                             "64,1", "--requests", "4000", "--max-tokens", "16"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 150
        levels: list[int] = []
        while not levels:  # the c=64 level saved; c=1 then runs for long: the kill lands in it
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no level was saved"
            time.sleep(0.2)
            files = sorted(sessions_dir().glob("*.toml"))
            trials = load_session(files[0]).trials if files else []
            levels = [lv.concurrency for t in trials for lv in t.levels]
            assert all(t.status == "running" for t in trials), trials
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        cli("host", "stop", "--host", "demo")
    (path,) = sorted(sessions_dir().glob("*.toml"))
    (trial,) = load_session(path).trials
    assert (trial.status, trial.failure) == ("cancelled", INTERRUPTED)
    assert [lv.concurrency for lv in trial.levels][:1] == [64]
    shown = cli("session", "show", str(path))
    assert "trial 1 cancelled: interrupted: the process that ran it ended without finishing it (killed?)" in shown.stdout


@pytest.mark.parametrize("earlier", [0, 2])  # 2: the panel opens with the newest trial, the rest read after
async def test_the_panel_says_once_a_trial_was_interrupted_and_the_next_start_says_nothing(
        tmp_path: Path, earlier: int) -> None:
    path = tmp_path / "s.toml"
    kill(start_writer(path, earlier))
    said: list[list[str]] = []
    for _ in range(2):  # this start, then the next
        app = offline_app(argparse.Namespace(sessions=False, session=str(path), host=None), Config())
        notes = record_notifications(app)
        assert (app.trials_to_load is not None) == (earlier > 0)  # 2: opened with its newest trial only
        async with app.run_test(size=(140, 40)) as pilot:
            for _ in range(200):
                if app.session_load is None or app.session_load.done:
                    break
                await pilot.pause(0.05)
            await pilot.pause()
            row = app.session.trials[-1]
            assert (row.status, [lv.concurrency for lv in row.levels]) == ("cancelled", [4])
        said.append([n for n in notes if "interrupted" in n])
    assert said == [[f"Trial {earlier + 1} (steps=3) was interrupted: the process that ran it ended without finishing it "
                     "(killed?); the 1 level it finished is kept, recorded as cancelled."], []]
    assert 'status = "running"' not in path.read_text()


def test_a_writer_that_ends_as_it_should_leaves_no_lock_file_and_a_killed_one_leaves_its_own() -> None:
    from specdec_tui.core.trial_writer import writers_dir

    code = "from specdec_tui.core.trial_writer import this_writer; print(this_writer(), flush=True)"
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert ended.stdout.strip() and not list(writers_dir().glob(f"{ended.stdout.strip()}.lock"))
    child = subprocess.Popen([sys.executable, "-c", code + "; import time; time.sleep(600)"], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    name = child.stdout.readline().strip()
    kill(child)
    assert [p.name for p in writers_dir().iterdir()] == [f"{name}.lock"]
