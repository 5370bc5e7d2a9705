"""Issue 36, point 13: a session of thousands of trials stays usable. Its parsed form is cached beside the TOML
(and never used once the TOML changed), `session show` lists the newest trials and says how to see the rest, and
the HTML report's charts name a few trials and draw the others as one collection. (The times are bench/
huge_session.py's: 10,000 trials, beside a 3-trial session.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from specdec_tui.cli.session_cmd import SHOW_TRIALS
from specdec_tui.cli.tui_cmd import offline_app
from specdec_tui.core.config import Config
from specdec_tui.core.report_charts import LABELLED_TRIALS, tok_s_chart_svg, trade_off_chart_svg
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.core.session_cache import cache_path, read_cached
from specdec_tui.core.session_index import read_head
from specdec_tui.core.session_merge import disk_stamp, merge_into
from specdec_tui.loop.session_saver import SessionSaver, saver_for
from specdec_tui.ui import session_load


def long_session(n: int) -> Session:
    trials = [Trial(id=i, unit_text=f"u{i}", label=f"t{i}", status="ok",
                    levels=[LevelResult(concurrency=c, requests=4, output_tok_s=100.0 + (i * 37) % 101 + c,
                                       per_request_tok_s=Dist(p50=50.0 + (i * 53) % 97),
                                       ttft_ms=Dist(p99=300.0)) for c in (1, 4)])  # within the limit: 'best'
              for i in range(1, n + 1)]
    return Session(host="h", unit="u.service", trials=trials)


def test_a_saved_session_is_read_back_from_its_cache_until_the_toml_changes(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    session = long_session(30)
    save_session(session, path)
    assert cache_path(path).is_file()
    assert load_session(path) == session
    cache_path(path).write_bytes(cache_path(path).read_bytes().replace(b'"t7"', b'"from the cache"'))
    assert load_session(path).trials[6].label == "from the cache"  # read from the cache, not the TOML
    path.write_text(path.read_text().replace('label = "t7"', 'label = "edited by hand"'))
    assert load_session(path).trials[6].label == "edited by hand"  # the TOML changed: the cache is not used
    assert load_session(path).trials[6].label == "edited by hand"  # and the cache was written again from it


def test_show_lists_the_newest_trials_and_says_how_to_see_every_one(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    save_session(long_session(SHOW_TRIALS + 50), path)
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "show", str(path)], capture_output=True,
                          text=True, timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│") and " t" in line]
    assert len(rows) == SHOW_TRIALS and " t51 " in rows[0] and f" t{SHOW_TRIALS + 50} " in rows[-1]
    assert "50 earlier trial(s) not listed" in done.stdout and "--format csv" in done.stdout


def test_the_reports_charts_name_a_few_trials_and_draw_the_rest_together() -> None:
    session = long_session(500)
    tok_s = tok_s_chart_svg(session)
    assert tok_s.count("#500 ") == 1 and "#1 " not in tok_s and tok_s.count("<text") < 2 * LABELLED_TRIALS + 30
    assert f"{500 - LABELLED_TRIALS} earlier trials" in tok_s
    trade_off = trade_off_chart_svg(session)
    assert "trials off the front" in trade_off and trade_off.count("<text") < 2 * LABELLED_TRIALS + 30


async def test_the_panel_is_up_before_a_long_sessions_trials_are_read_and_then_lists_every_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel opens with the session's newest trial and says it is loading the rest; keys work meanwhile; then
    every trial is listed (issue 36: the whole file was read before the first frame)."""
    path = tmp_path / "s.toml"
    save_session(long_session(300), path)
    gate, reads = threading.Event(), []

    def held_load(p: Path) -> Session:
        reads.append(p)
        assert gate.wait(60)
        return load_session(p)

    monkeypatch.setattr(session_load, "load_session", held_load)
    app = offline_app(argparse.Namespace(sessions=False, session=str(path), host=None), Config())
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(200):
            if reads:
                break
            await pilot.pause(0.05)
        assert reads == [path]  # the whole file is being read: after the first frame, in a worker
        assert "loading 300 trials" in app.sub_title
        assert app.main.trials_list.trial_ids == [300]  # the newest trial only, so far
        await pilot.press("5")  # a key answered meanwhile (the Trials tab)
        await pilot.pause()
        assert app.main.query_one(TabbedContent).active == "trials"
        gate.set()
        for _ in range(400):
            if app.session_load is not None and app.session_load.done:
                break
            await pilot.pause(0.05)
        await pilot.pause()
        assert app.main.trials_list.trial_ids == list(range(1, 301))
        assert "loading" not in app.sub_title
        assert [t.id for t in app.session.trials] == list(range(1, 301))
        assert app.session.disk_stamp is not None  # now the file as read: a save writes only what changed


def test_the_panels_saves_keep_the_cache_of_the_file_they_write(tmp_path: Path) -> None:
    """The panel's saver writes the cache beside the TOML: before, its first save left a stale cache and the next
    `session show` or panel start read the whole TOML (13 s at 10,000 trials)."""
    path = tmp_path / "s.toml"
    session = long_session(30)
    save_session(session, path)
    session.trials.append(Trial(id=31, unit_text="u31", label="t31", status="ok",
                                levels=[LevelResult(concurrency=1, requests=4, output_tok_s=999.0)]))
    saver = saver_for(path)
    saver.save(session)
    saver.flush(30)
    cached = read_cached(path, disk_stamp(path))
    assert cached is not None and [row["id"] for row in cached.index] == list(range(1, 32))
    assert cached.doc() is not None and load_session(path) == session
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "show", str(path)], capture_output=True,
                          text=True, timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert "best at c=1: trial 31 t31 at 999.0 tok/s" in done.stdout, done.stdout[-2000:]


def test_a_writers_first_save_takes_the_tables_already_in_the_file_from_the_file(tmp_path: Path) -> None:
    """A new writer (another process: `bench --record`, a headless sweep) saves a long session without making every
    trial's table again (10 s at 10,000 trials, the file's lock held): the file's own tables are kept as they are,
    a note a person wrote in one included, and the new trial follows them; the cache follows the file."""
    path = tmp_path / "s.toml"
    save_session(long_session(30), path)
    path.write_text(path.read_text().replace('label = "t7"\n', 'label = "t7"\n# rerun: the fan was loud\n'))
    session = load_session(path)  # the file as a person left it
    session.add(Trial(id=31, unit_text="u31", label="t31", status="ok"))
    saver = SessionSaver(path)  # a process's first saver of this file
    saver.save(session)
    saver.flush(30)
    text = path.read_text()
    assert "# rerun: the fan was loud" in text and text.index('label = "t30"') < text.index('label = "t31"')
    assert load_session(path) == session and read_cached(path, disk_stamp(path)) is not None


def test_a_save_after_another_writers_keeps_this_writers_change_to_a_trial_already_in_the_file(tmp_path: Path) -> None:
    """After another writer's save, the file's own tables are taken only for the trials as the file has them: a
    trial this writer changed since (a note on its running trial) is written as it is now, beside the other's."""
    path = tmp_path / "s.toml"
    save_session(long_session(30), path)
    mine, theirs = load_session(path), load_session(path)
    mine_saver = SessionSaver(path)
    mine_saver.save(mine)  # this writer has made its tables
    mine_saver.flush(30)
    theirs.add(Trial(id=31, unit_text="u31", label="theirs", status="ok"))
    save_session(theirs, path)
    mine.trials[4].notes = "the server was restarted by hand"
    mine_saver.save(mine)
    mine_saver.flush(30)
    back = load_session(path)
    assert back.trials[4].notes == "the server was restarted by hand"
    assert [t.label for t in back.trials][-2:] == ["t30", "theirs"] and len(back.trials) == 31


def test_a_trial_saved_before_the_rest_of_the_session_is_in_loses_no_trial(tmp_path: Path) -> None:
    """The panel opens with the newest trial only (`read_head`); a trial run and saved before the others are loaded
    is saved after all of the file's trials, with the next id, and the loaded trials join it in the file's order."""
    path = tmp_path / "s.toml"
    save_session(long_session(40), path)
    head = read_head(path)
    assert head is not None
    part, count = head
    assert count == 40 and [t.id for t in part.trials] == [40] and part.disk_stamp is None
    part.add(Trial(id=part.next_trial_id(), unit_text="u41", label="early", status="ok"))
    saver = SessionSaver(path)
    saver.save(part)
    saver.flush(30)
    back = load_session(path)
    assert [t.id for t in back.trials] == list(range(1, 42)) and back.trials[-1].label == "early"
    merge_into(part, load_session(path))  # what the panel's load does when the rest is in (ui.session_load)
    assert [t.label for t in part.trials] == [f"t{i}" for i in range(1, 41)] + ["early"]


def test_show_refuses_a_figure_that_is_no_figure_in_a_trial_it_does_not_list(tmp_path: Path) -> None:
    """`show` lists the newest trials only, but a string, a negative or 1e308 in an earlier one (the TOML edited, so
    its cache is not used) is still said in words with its trial, exit 1, no traceback."""
    path = tmp_path / "s.toml"
    save_session(long_session(SHOW_TRIALS + 5), path)
    text = path.read_text()
    for bad in ('"fast"', "-5.0", "1e308"):
        path.write_text(text.replace("output_tok_s = ", f"output_tok_s = {bad}\nx_output_tok_s = ", 1))
        done = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "show", str(path)], capture_output=True,
                              text=True, timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"{path}: trial #1: malformed trial" in done.stderr and "output_tok_s" in done.stderr, done.stderr
