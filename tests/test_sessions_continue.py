"""Issue 17, point 1: a start on a host continues that host's current session; `--new-session` starts a fresh one.
The headless `demo` as a user runs it, and the panel built the way `specdec-tui --demo` builds it, started twice."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.cli import tui_cmd
from specdec_tui.core.config import Config, HostConfig
from specdec_tui.core.config_file import load_config
from specdec_tui.core.paths import default_config_file, demo_dir, sessions_dir
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.loop.current_session import current_session_of
from specdec_tui.loop.states import Busy
from specdec_tui.ui.app import make_app

from .ui_helpers import FAST_PROFILE, record_notifications, started, wait_for

pytestmark = pytest.mark.timeout(240)

DEMO_SMALL = ["--time-scale", "50", "--concurrency", "1", "--requests", "2", "--max-tokens", "16"]


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True,
                          timeout=200, env={**os.environ, "COLUMNS": "200"})


def session_files() -> list[Path]:
    return sorted(sessions_dir().glob("*.toml"))


def test_two_demo_runs_append_to_one_session_and_new_session_starts_another() -> None:
    for _ in range(2):
        done = cli("demo", *DEMO_SMALL)
        assert done.returncode == 0, done.stderr
    files = session_files()
    assert len(files) == 1, files
    assert [t.id for t in load_session(files[0]).trials] == [1, 2]
    assert f"session saved to {files[0]}" in done.stdout

    fresh = cli("demo", "--new-session", *DEMO_SMALL)
    assert fresh.returncode == 0, fresh.stderr
    files = session_files()
    assert len(files) == 2, files
    newest = current_session_of("demo", sessions_dir())
    assert newest is not None and f"session saved to {newest}" in fresh.stdout
    assert [t.id for t in load_session(newest).trials] == [1]


def test_trials_at_another_time_scale_start_a_session_of_their_own() -> None:
    """Newcomer pass (issue 35): the demo workspace keeps the time scale of the verb that created it (tune, sweep,
    replay at 25×, demo and the panel at 1×); made again at another scale, its trials landed in the same session as
    the old ones, figures 25× apart read as one server's. A start at another scale begins its own session."""
    import shutil

    first = cli("demo", *DEMO_SMALL)
    assert first.returncode == 0, first.stderr
    shutil.rmtree(demo_dir())  # the workspace made again, by a verb with another default scale
    again = cli("demo", *[("40" if a == "50" else a) for a in DEMO_SMALL])
    assert again.returncode == 0, again.stderr
    files = session_files()
    assert len(files) == 2, files
    assert "ran at time scale 50, the demo now runs at another: they are not mixed" in again.stderr
    scales = sorted({t.flags.get("time-scale") for f in files for t in load_session(f).trials})
    assert scales == ["40", "50"] and all(len(load_session(f).trials) == 1 for f in files)


def test_the_current_session_is_the_hosts_newest_file(tmp_path: Path) -> None:
    older, other, newer = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    save_session(Session(host="gpu1", trials=[Trial(id=1, unit_text="")]), older)
    save_session(Session(host="gpu2"), other)
    save_session(Session(host="gpu1"), newer)
    os.utime(older, (1_000, 1_000))
    os.utime(newer, (2_000, 2_000))
    os.utime(other, (3_000, 3_000))
    assert current_session_of("gpu1", tmp_path) == newer
    assert current_session_of("gpu2", tmp_path) == other
    assert current_session_of("gpu3", tmp_path) is None


def panel_args(*, new_session: bool = False) -> argparse.Namespace:
    return argparse.Namespace(config=None, session=None, new_session=new_session, demo=True, headless=False, nodes=1)


async def test_a_second_panel_start_on_the_demo_host_lists_the_first_starts_trials() -> None:
    ensure_demo_workspace(demo_dir(), time_scale=200)
    first = tui_cmd.demo_app(panel_args())
    seen = record_notifications(first)
    async with first.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: first.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo start", steps=1200)
        await pilot.press("b")
        await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark", steps=2400)
        first_ids = first.main.trials_list.trial_ids
        assert first_ids

    second = tui_cmd.demo_app(panel_args())
    async with second.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: second.main.trials_list.trial_ids == first_ids, "the first start's trials")
        assert second.session_path == first.session_path
        # the Bench tab shows that trial's levels beside the chart that draws it, and says whose they are (it said
        # "No benchmark yet" under the chart of the last start's run)
        table = second.main.bench_table
        await wait_for(pilot, lambda: table.status.startswith(f"#{first_ids[-1]} "), "the last trial in the Bench tab")
        assert "5 levels." in table.status and "No benchmark yet" not in table.status
        # a theme picked under --demo is saved like any other: in the user's config file, without the demo's hosts
        second.theme = "specdec-light"
        await pilot.pause()
    assert load_config(default_config_file()).ui.theme == "specdec-light"
    assert "hosts" not in default_config_file().read_text()

    fresh = tui_cmd.demo_app(panel_args(new_session=True))
    async with fresh.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.pause()
        assert fresh.main.trials_list.trial_ids == []
        assert fresh.session_path != first.session_path



def test_bench_record_appends_each_run_to_the_hosts_current_session() -> None:
    ensure_demo_workspace(demo_dir(), time_scale=50)
    try:
        assert cli("host", "restart", "--host", "demo").returncode == 0
        for _ in range(2):
            done = cli("bench", "--host", "demo", "--record", "--concurrency", "1", "--requests", "2",
                       "--max-tokens", "16")
            assert done.returncode == 0, done.stderr
        files = session_files()
        assert len(files) == 1, files
        assert f"recorded as trial 2 in {files[0]}" in done.stderr
        trials = load_session(files[0]).trials
        assert [t.status for t in trials] == ["ok", "ok"] and all(t.level(1) for t in trials)
        assert "--speculative-num-steps" in trials[0].unit_text
    finally:
        cli("host", "stop", "--host", "demo")


async def test_switching_host_on_the_fleet_tab_continues_that_hosts_session(tmp_path: Path) -> None:
    hosts = {}
    for name in ("a", "b"):
        ws = ensure_demo_workspace(tmp_path / name, time_scale=200)
        hosts[name] = HostConfig(name=name, address="local", workspace=str(ws.root), unit=ws.unit_name)
    b_session = sessions_dir() / "20260301-090000-b.toml"
    save_session(Session(host="b", unit="sglang-demo.service",
                         trials=[Trial(id=1, unit_text="", label="steps=2"), Trial(id=2, unit_text="", label="steps=3")]),
                 b_session)
    ws_a = ensure_demo_workspace(tmp_path / "a")
    config = Config(hosts=hosts, profiles={"default": FAST_PROFILE}, default_host="a")
    app = make_app(config, LocalHost(ws_a.root, ws_a.unit_name, ws_a.base_url, name="a"),
                   Session(host="a", unit=ws_a.unit_name), session_path=tmp_path / "a-session.toml")
    notes = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in notes),
                       "a's own start", steps=1200)
        await pilot.press("6")
        await wait_for(pilot, lambda: app.main.fleet_table.row_names == ["a", "b"], "both hosts in the Fleet tab")
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.host_name == "b", "the switch to b")
        await wait_for(pilot, lambda: app.main.trials_list.trial_ids == [1, 2], "b's trials in the Trials tab")
        await wait_for(pilot, lambda: app.config_pane.running_text != "", "b's unit in the Config tab")
        assert app.session_path == b_session
        assert any("Active host: b" in n and "continuing its session (2 trials)" in n for n in notes), notes
