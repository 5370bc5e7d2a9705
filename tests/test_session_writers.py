"""Issue 36, point 4: several writers of one session (four `bench --record` at once, the panel and a headless
run) lose no trial and give no two trials one id; the file on disk is always a whole session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.paths import demo_dir
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.trial import TrialLoop

from .conftest import DEMO_TEST_PROFILE

pytestmark = pytest.mark.timeout(300)


def cli_process(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "specdec_tui", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})


def test_two_writers_that_loaded_one_file_both_keep_their_trials(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(Session(host="demo", unit="u", trials=[Trial(id=1, unit_text="a")]), path)
    panel, headless = load_session(path), load_session(path)
    panel.add(Trial(id=panel.next_trial_id(), unit_text="panel"))
    headless.add(Trial(id=headless.next_trial_id(), unit_text="headless"))
    save_session(panel, path)
    save_session(headless, path)
    on_disk = load_session(path).trials
    assert [(t.id, t.unit_text) for t in on_disk] == [(1, "a"), (2, "panel"), (3, "headless")]
    assert [t.id for t in headless.trials] == [1, 2, 3]  # the writer sees the id its trial was recorded as
    headless.trials[2].notes = "later"  # the next save of a trial it holds replaces that trial, not a copy
    save_session(headless, path)
    assert [(t.id, t.notes) for t in load_session(path).trials] == [(1, ""), (2, ""), (3, "later")]


def test_a_session_saved_over_another_one_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(Session(host="a", trials=[Trial(id=1, unit_text="old")]), path)
    save_session(Session(host="b", trials=[Trial(id=1, unit_text="new")]), path)
    assert [t.unit_text for t in load_session(path).trials] == ["new"]


def test_four_bench_record_at_once_record_four_trials_with_distinct_ids() -> None:
    ensure_demo_workspace(demo_dir(), time_scale=50)
    small = ["--host", "demo", "--record", "--concurrency", "1", "--requests", "2", "--max-tokens", "16"]
    try:
        assert subprocess.run([sys.executable, "-m", "specdec_tui", "host", "restart", "--host", "demo"],
                              capture_output=True, timeout=120).returncode == 0
        first = cli_process("bench", *small)
        _, err = first.communicate(timeout=200)
        assert first.returncode == 0, err
        path = Path(re.findall(r"recorded as trial 1 in (\S+)", err)[0])
        runs = [cli_process("bench", *small) for _ in range(4)]
        said = []
        for run in runs:
            _, err = run.communicate(timeout=250)
            assert run.returncode == 0, err
            said += [int(n) for n in re.findall(r"recorded as trial (\d+) in", err)]
        trials = load_session(path).trials
        assert sorted(said) == [2, 3, 4, 5]
        assert [t.id for t in trials] == [1, 2, 3, 4, 5]
        assert [t.status for t in trials] == ["ok"] * 5 and all(t.level(1) for t in trials)
        assert not list(path.parent.glob(f".{path.name}.*.tmp"))
    finally:
        subprocess.run([sys.executable, "-m", "specdec_tui", "host", "stop", "--host", "demo"], capture_output=True,
                       timeout=120)


async def test_the_panels_trial_loop_and_a_headless_bench_record_on_one_host_keep_both_trials() -> None:
    ws = ensure_demo_workspace(demo_dir(), time_scale=50)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    try:
        await host.restart()
        headless = cli_process("bench", "--host", "demo", "--record", "--concurrency", "1", "--requests", "2",
                               "--max-tokens", "16")
        _, err = headless.communicate(timeout=200)
        assert headless.returncode == 0, err
        path = Path(re.findall(r"recorded as trial 1 in (\S+)", err)[0])
        panel = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name), profile=DEMO_TEST_PROFILE,
                          base_url=ws.base_url, session_path=path, healthy_timeout_s=60)
        panel.session = load_session(path)  # the panel opened the session before the next headless run
        again = cli_process("bench", "--host", "demo", "--record", "--concurrency", "1", "--requests", "2",
                            "--max-tokens", "16")
        _, err = again.communicate(timeout=200)
        assert "recorded as trial 2 in" in err, err
        trial = await panel.bench()
        assert trial.status == "ok" and trial.id == 3
        on_disk = load_session(path).trials
        assert [t.id for t in on_disk] == [1, 2, 3] and len({t.uid for t in on_disk}) == 3
        assert [t.id for t in panel.session.trials] == [1, 2, 3]
    finally:
        await host.stop()
        await host.close()
