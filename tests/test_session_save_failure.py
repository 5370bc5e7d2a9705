"""A session save that fails during a trial (its directory gone: here replaced by a file, which refuses root too):
the operator reads what failed and what to do, the trial goes on with its results in memory, and the file is
written as soon as the directory is back. At exit with the directory still gone, the trials go to a rescue copy
and the command says where. Never a traceback, never a lost result (Pilot and the CLI, the real demo host)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.session import load_session
from specdec_tui.loop.session_saver import saver_for

from .ui_helpers import demo_app, demo_ready, record_notifications, wait_for

pytestmark = pytest.mark.timeout(240)


def break_dir(directory: Path) -> Path:
    """The directory moved away and a file put in its place: no write under it succeeds, as root either."""
    away = directory.with_name(directory.name + ".away")
    directory.rename(away)
    directory.write_text("not a directory\n")
    return away


def mend_dir(directory: Path, away: Path) -> None:
    directory.unlink()
    away.rename(directory)


async def test_panel_says_a_failed_save_keeps_the_trial_and_saves_it_when_the_directory_is_back(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    session_file = sessions / "s.toml"
    app = demo_app(tmp_path, session_path=session_file)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        away = break_dir(sessions)
        try:
            await pilot.press("b")
            await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark",
                           steps=1200)
            # the writer thread may not have tried the last save yet when the benchmark is done (a quick run on a
            # quiet machine): the directory stays broken until the failure is said (the saver's poll, within 1 s)
            await wait_for(pilot, lambda: any(n.startswith("could not save session") for n in seen),
                           "the failed save said", steps=600)
        finally:  # a saver still failing at the end of the test run would write a rescue copy from this process
            mend_dir(sessions, away)
        failed = [n for n in seen if n.startswith("could not save session")]
        assert len(failed) == 1, seen  # said once, not at every level
        assert f"{session_file}: {sessions} is not a directory" in failed[0]
        assert "check the directory exists and is writable" in failed[0] and "The trial goes on" in failed[0]
        trial = app.session.trials[-1]
        assert trial.status == "ok" and [lv.concurrency for lv in trial.levels] == [1, 4]  # measured, in memory
        assert all(lv.output_tok_s > 0 for lv in trial.levels)
        await wait_for(pilot, lambda: any(n.startswith("The session is saved again") for n in seen),
                       "the file written once the directory is back", steps=600)
        saver_for(session_file).flush(timeout_s=30)
        on_disk = load_session(session_file).trials[-1]
        assert on_disk.id == trial.id and [lv.output_tok_s for lv in on_disk.levels] == pytest.approx(
            [lv.output_tok_s for lv in trial.levels], rel=1e-5)


SWEEP_MID_RUN = """
import sys
from pathlib import Path
from specdec_tui.cli.main import main
from specdec_tui.loop import trial as trial_module

sessions = Path(sys.argv[1])
record = trial_module.TrialLoop.record
def record_then_break(self, trial):
    if trial.levels and sessions.is_dir():  # the first finished level: the directory goes (and stays gone)
        sessions.rename(sessions.with_name("gone"))
        sessions.write_text("not a directory")
    record(self, trial)
trial_module.TrialLoop.record = record_then_break
raise SystemExit(main(sys.argv[2:]))
"""


def test_cli_sweep_whose_directory_goes_mid_run_finishes_and_says_where_its_trials_are(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = sessions / "sweep.toml"
    env = {"SPECDEC_TUI_DATA_DIR": str(tmp_path / "data"), "SPECDEC_TUI_CONFIG_DIR": str(tmp_path / "config"),
           "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", SWEEP_MID_RUN, str(sessions), "sweep", "--host", "demo", "--values",
                           "1,2", "--repeats", "1", "--session", str(path), "--concurrency", "1", "--requests", "2",
                           "--max-tokens", "16", "--time-scale", "25"],
                          capture_output=True, text=True, timeout=200, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    said = f"could not save session {path}: {sessions} is not a directory"
    assert f"  · {said}" in done.stderr, done.stderr  # during the run, once, where it happened
    assert done.stderr.count(f"  · {said}") == 1
    assert f"specdec-tui: {said}" in done.stderr  # and at exit, with where the trials are, once
    assert done.stderr.count(f"specdec-tui: {said}") == 1, done.stderr
    assert done.returncode == 1  # the sweep ran, but its trials are not where it was asked to keep them
    rescued = tmp_path / "data" / "rescued" / "sweep.toml"
    assert f"its trials were saved to {rescued} instead" in done.stderr, done.stderr
    kept = load_session(rescued)
    assert [t.sweep.get("value") for t in kept.trials] == ["1", "2"]  # both trials, the second run after the failure
    assert all(t.status == "ok" and t.levels and t.levels[0].output_tok_s > 0 for t in kept.trials)
