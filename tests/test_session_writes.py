"""The panel's session writes, made from the pieces kept between saves (issue 34: a write costs what changed): the
file and its cache read back as the session they were written from, after every write of a sweep; a writer killed
with SIGKILL in the middle of a sweep leaves a complete, valid session holding at least every trial it had flushed;
and the session opened again holds every trial."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, dumps_session, load_session, save_session
from specdec_tui.core.session_cache import read_cached
from specdec_tui.core.session_merge import disk_stamp
from specdec_tui.loop.session_saver import saver_for


def level(c: int, tok_s: float) -> LevelResult:
    return LevelResult(concurrency=c, requests=8, output_tokens=800, duration_s=2.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=tok_s / c), ttft_ms=Dist(p50=40.0, p99=90.0))


def cache_of(path: Path) -> tuple[dict[str, object], list[object], list[dict[str, object]]]:
    cached = read_cached(path, disk_stamp(path))
    assert cached is not None, "the cache does not belong to the file written"
    doc = cached.doc()
    assert doc is not None
    return doc, cached.profiles, cached.index


def test_every_write_of_a_sweep_reads_back_as_the_session_with_its_cache_as_a_whole_save_makes_it(
        tmp_path: Path) -> None:
    """After each save of a sweep (a trial begun, its levels, its end; a note on an old trial; a second profile; a
    trial replaced by one of the same id and marks but other flags and unit),
    the saver's file reads back as the session, its text as `dumps_session` makes it, and its cache (the index
    `session show` and the panel's start read, the profiles numbered) is the one a whole save writes."""
    path, whole = tmp_path / "s.toml", tmp_path / "whole.toml"
    session = Session(host="h", unit="u.service")
    for i in range(1, 31):
        session.add(Trial(id=i, unit_text=f"[Service]\nExecStart=/x --steps {i}\n", status="ok", label=f"t{i}",
                          levels=[level(1, 100.0 + i), level(4, 300.0 + i)]))
    save_session(session, path)
    session = load_session(path)
    saver = saver_for(path)
    saver.prime(session)
    other = BenchProfile(name="long", concurrency=(1, 16))
    steps = [lambda: session.add(Trial(id=31, unit_text="[Service]\nExecStart=/x --steps 9\n", label="steps=9")),
             lambda: session.trials[-1].levels.append(level(1, 150.0)),
             lambda: session.trials[-1].levels.append(level(4, 420.0)),
             lambda: setattr(session.trials[-1], "status", "ok"),
             lambda: setattr(session.trials[3], "notes", "the fan was loud"),
             lambda: session.add(Trial(id=32, unit_text="[Service]\nExecStart=/x\n", profile=other)),
             lambda: session.trials[-1].levels.append(level(16, 900.0)),
             lambda: setattr(session.trials[-1], "status", "failed"),
             lambda: session.add(Trial(id=7, unit_text="[Service]\nExecStart=/x --steps 9\n", status="ok",
                                       label="t7", flags={"speculative-num-steps": "9"},
                                       profile=session.trials[6].profile, started_at=session.trials[6].started_at,
                                       uid=session.trials[6].uid, levels=[level(1, 107.0), level(4, 307.0)]))]
    for step in steps:
        step()
        saver.save(session)
        saver.flush(timeout_s=60)
        assert load_session(path) == session
        assert tomllib.loads(path.read_text()) == tomllib.loads(dumps_session(session))
        save_session(load_session(path), whole)
        assert cache_of(path) == cache_of(whole)
    assert [row["p"] for row in cache_of(path)[2]] == [0] * 31 + [1]


CHILD = """
import sys
from pathlib import Path
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, load_session
from specdec_tui.loop.session_saver import saver_for
path = Path(sys.argv[1])
session = load_session(path)
saver = saver_for(path)
n = len(session.trials)
while True:  # a sweep that never ends: a trial, two levels, its end; saved at each, flushed at each trial's end
    n += 1
    trial = session.add(Trial(id=n, unit_text=f"[Service]\\nExecStart=/x --steps {n}\\n", label=f"t{n}"))
    saver.save(session)
    for c in (1, 4):
        trial.levels.append(LevelResult(concurrency=c, requests=4, output_tok_s=float(n * c)))
        saver.save(session)
    trial.status = "ok"
    saver.save(session)
    saver.flush(60)
    print(n, flush=True)
"""


def test_a_writer_killed_mid_sweep_leaves_a_valid_session_with_every_trial_it_flushed(tmp_path: Path) -> None:
    """SIGKILL (no atexit, no flush) at a moment the writer thread may be in the middle of a write: the file is
    a complete session, every trial flushed before the kill is in it whole, and its cache is its own or none."""
    path = tmp_path / "s.toml"
    save_session(Session(host="h", unit="u.service", trials=[
        Trial(id=i, unit_text=f"u{i}", status="ok", levels=[level(1, float(i))]) for i in range(1, 201)]), path)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    flushed = 0
    try:
        while flushed < 240:  # forty trials swept, then killed while it goes on saving
            line = child.stdout.readline()
            assert line, f"the writer ended (exit {child.poll()})"
            flushed = int(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    session = load_session(path)  # complete and valid: no SessionError
    assert [t.id for t in session.trials[:flushed]] == list(range(1, flushed + 1))
    for trial in session.trials[200:flushed]:
        assert trial.status == "ok" and [lv.output_tok_s for lv in trial.levels] == [trial.id, trial.id * 4.0]
    assert tomllib.loads(path.read_text())["trials"][flushed - 1]["label"] == f"t{flushed}"
    cached = read_cached(path, disk_stamp(path))
    assert cached is None or [row["id"] for row in cached.index] == [t.id for t in session.trials]
    reopened = saver_for(path)  # the next writer of the file takes it from there: every trial kept
    session.add(Trial(id=session.next_trial_id(), unit_text="u", status="ok"))
    reopened.save(session)
    reopened.flush(60)
    assert [t.id for t in load_session(path).trials] == [t.id for t in session.trials]
