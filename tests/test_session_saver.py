"""Session files written off the event loop (issue 34): a burst of saves is coalesced, the file on disk is a
complete, valid session at every moment a reader looks, the last state is what stays, and a failed write is
said in words to whoever saves or flushes next."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, SessionError, Trial, load_session
from specdec_tui.loop.session_saver import Copied, saver_for, snapshot

UNIT = "[Service]\nExecStart=/x --speculative-num-steps 3\n"


def level(c: int) -> LevelResult:
    return LevelResult(concurrency=c, requests=8, errors=0, output_tokens=800, duration_s=2.0, output_tok_s=400.0,
                       per_request_tok_s=Dist(p50=100.0), ttft_ms=Dist(p50=40.0), tpot_ms=Dist(p50=10.0))


def test_a_burst_of_saves_leaves_a_valid_file_at_every_moment_and_the_last_state(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    session = Session(host="h", unit="u.service")
    saver = saver_for(path)
    stop, seen, broken = threading.Event(), [], []

    def read() -> None:
        while not stop.is_set():
            if path.exists():
                try:
                    seen.append(len(load_session(path).trials))
                except SessionError as err:  # a half-written file
                    broken.append(str(err))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(1, 301):
            trial = Trial(id=i, unit_text=UNIT, status="ok")
            trial.levels.append(level(1))
            session.add(trial)
            saver.save(session)
            trial.levels.append(level(4))  # the loop goes on changing the trial: the snapshot is unaffected
        saver.flush(timeout_s=60)
    finally:
        stop.set()
        reader.join()
    assert not broken, broken[:3]
    assert seen == sorted(seen)  # never an older state after a newer one
    saved = load_session(path)  # as saved last: the level added after that save is not in it
    assert len(saved.trials) == 300 and [lv.concurrency for lv in saved.trials[-1].levels] == [1]
    assert saver.writes < 300  # coalesced: saves that came while one was written were folded into the next
    saver.save(session)
    saver.flush(timeout_s=60)
    assert [lv.concurrency for lv in load_session(path).trials[-1].levels] == [1, 4]


def test_a_snapshot_does_not_follow_later_changes() -> None:
    session = Session(host="h")
    session.add(Trial(id=1, unit_text=UNIT))
    taken = snapshot(session)
    session.trials[0].levels.append(level(1))
    session.trials[0].status = "ok"
    session.add(Trial(id=2, unit_text=UNIT))
    assert len(taken.trials) == 1 and taken.trials[0].levels == [] and taken.trials[0].status == "running"


def test_a_failed_write_is_said_at_the_next_flush_and_save(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    saver = saver_for(blocked / "s.toml")
    saver.save(Session(host="h"))
    with pytest.raises(SessionError, match="could not save session .*check the directory exists and is writable"):
        saver.flush(timeout_s=60)
    saver.save(Session(host="h"))  # the error was said once; this write fails again, said at the next call
    with pytest.raises(SessionError):
        saver.flush(timeout_s=60)
    assert "is not a directory" in saver.failing  # and it is tried again until the cause goes
    blocked.unlink()
    for _ in range(600):  # with no new save: the retried write goes through (waited for, not timed)
        if not saver.failing and saver.idle:
            break
        time.sleep(0.05)
    assert not saver.failing and load_session(blocked / "s.toml").host == "h"


def test_the_text_built_from_kept_trials_reads_back_as_the_whole_session_does() -> None:
    """The saver keeps each unchanged trial's table: what it writes reads back exactly as `dumps_session`'s text, also
    after a trial changed (a level, a status, a label) and one was added."""
    import tomllib

    from specdec_tui.core.session import dumps_session
    from specdec_tui.loop.session_text import SessionText

    session = Session(host="h", unit="u.service", notes="a day of sweeping")
    for i in range(1, 6):
        trial = Trial(id=i, unit_text=UNIT.replace("3", str(i)), status="ok", label=f"steps={i}")
        trial.levels.append(level(1))
        session.add(trial)
    text = SessionText()
    assert tomllib.loads(text.dumps(session)) == tomllib.loads(dumps_session(session))
    session.trials[2].levels.append(level(4))
    session.trials[3].label = "renamed"
    session.trials[4].status = "failed"
    session.add(Trial(id=6, unit_text="[Service]\r\nExecStart=/x\r\n"))
    assert tomllib.loads(text.dumps(session)) == tomllib.loads(dumps_session(session))


def test_a_save_made_while_the_last_one_is_written_never_reads_the_file_back(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: a save that came while the writer was writing (a sweep's levels come in bursts) took a snapshot with
    the stamp from before that write, so the writer — and the caller, looking between the rename and the stamp being
    set — read the whole file back to merge it: at 1,000 trials, seconds of pure-Python parsing that held the GIL
    while the panel's keys waited. The file is still this saver's own write then: nothing is read; a file another
    process wrote meanwhile still is (its trial kept)."""
    import specdec_tui.core.session as core_session
    import specdec_tui.loop.session_saver as saver_module

    path = tmp_path / "s.toml"
    session = Session(host="h", unit="u.service")
    session.add(Trial(id=1, unit_text=UNIT, status="ok"))
    saver = saver_for(path)
    saver.save(session)
    saver.flush(timeout_s=60)
    reads: list[Path] = []
    real_load, real_write = core_session.load_session, saver_module.write_atomic
    monkeypatch.setattr(core_session, "load_session", lambda p: reads.append(Path(p)) or real_load(p))
    written, go_on = threading.Event(), threading.Event()

    def slow_write(target: Path, text: object) -> None:  # the file renamed into place, its stamp not yet taken
        real_write(target, text)
        written.set()
        assert go_on.wait(10)

    monkeypatch.setattr(saver_module, "write_atomic", slow_write)
    session.trials[0].levels.append(level(1))
    saver.save(session)
    assert written.wait(30)
    session.trials[0].levels.append(level(4))
    saver.save(session)  # while the write before it is on its way
    go_on.set()
    saver.flush(timeout_s=60)
    assert reads == []
    assert [lv.concurrency for lv in load_session(path).trials[0].levels] == [1, 4]

    other = load_session(path)  # another process adds a trial: read back and kept
    other.add(Trial(id=2, unit_text=UNIT, status="ok"))
    from specdec_tui.core.session import save_session

    save_session(other, path)
    saver.save(session)
    saver.flush(timeout_s=60)
    assert reads and [t.id for t in load_session(path).trials] == [1, 2]


def test_a_session_read_from_its_file_is_primed_from_the_files_own_tables(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: priming made every trial's table (~1 s of pure Python at 1,000 trials, taking the GIL from the panel
    in turns as it started). A session as its file holds it takes the file's own tables: the save after a change makes
    only the changed and the new trial's, and the file reads back as the whole session's text does. A file changed
    meanwhile (another writer) is not taken: the tables are made."""
    import tomllib

    import specdec_tui.loop.session_text as text_module
    from specdec_tui.core.session import dumps_session, save_session

    path = tmp_path / "s.toml"
    written = Session(host="h", unit="u.service")
    for i in range(1, 21):
        trial = Trial(id=i, unit_text=UNIT.replace("3", str(i)), status="ok", label=f"steps={i}")
        trial.levels.append(level(1))
        written.add(trial)
    save_session(written, path)
    session = load_session(path)
    made: list[int] = []
    trial_doc = text_module._trial_doc
    monkeypatch.setattr(text_module, "_trial_doc", lambda trial: made.append(trial.id) or trial_doc(trial))
    saver = saver_for(path)
    saver.prime(session)
    saver.flush(timeout_s=60)
    assert made == []
    session.trials[4].levels.append(level(4))
    session.add(Trial(id=21, unit_text=UNIT, status="running"))
    saver.save(session)
    saver.flush(timeout_s=60)
    assert made == [5, 21]
    assert tomllib.loads(path.read_text()) == tomllib.loads(dumps_session(session))
    assert [lv.concurrency for lv in load_session(path).trials[4].levels] == [1, 4]

    other = tmp_path / "other.toml"
    save_session(written, other)
    stale = load_session(other)
    written.trials[0].label = "renamed by another writer"
    save_session(written, other)
    made.clear()
    saver_for(other).prime(stale)
    saver_for(other).flush(timeout_s=60)
    assert len(made) == 20


@pytest.mark.parametrize("primed", [True, False])
def test_a_session_file_of_no_trials_takes_its_first_trial(tmp_path: Path, primed: bool) -> None:
    """A session saved before any trial (the panel's save key, a bench's fresh file), opened again: the first trial
    recorded into it was not saved — "could not save session …: zip() argument 2 is longer than argument 1" — because
    cutting a file of no trials into its tables made one table ending the file."""
    from specdec_tui.core.session import save_session

    path = tmp_path / "empty.toml"
    save_session(Session(host="h", unit="u.service"), path)
    session = load_session(path)
    saver = saver_for(path)
    if primed:
        saver.prime(session)
        saver.flush(timeout_s=60)
    trial = Trial(id=1, unit_text=UNIT, status="ok")
    trial.levels.append(level(1))
    session.add(trial)
    saver.save(session)
    saver.flush(timeout_s=60)
    assert [t.id for t in load_session(path).trials] == [1]


def test_a_snapshot_copies_only_the_trials_changed_since_the_last_one() -> None:
    """Issue 34: every save of a 1,000-trial session copied all 1,000 trials on the panel's event loop, in the middle
    of a sweep, for the one trial that changed."""
    session = Session(host="h")
    for i in range(1, 1001):
        session.add(Trial(id=i, unit_text=UNIT, status="ok", levels=[level(1)]))
    earlier = Copied()
    first = snapshot(session, earlier)
    session.trials[4].label = "steps=4"  # an operator labels one trial
    session.trials[-1].levels.append(level(4))  # the loop adds a level to another
    session.add(Trial(id=1001, unit_text=UNIT))
    second = snapshot(session, earlier)
    copied = [n for n, trial in enumerate(second.trials[:1000]) if trial is not first.trials[n]]
    assert copied == [4, 999]  # the two that changed; the other 998 are the copies made before
    assert second.trials[4].label == "steps=4" and first.trials[4].label == ""
    assert len(second.trials[999].levels) == 2 and len(first.trials[999].levels) == 1
    assert len(second.trials) == 1001 and second.trials[1000] is not session.trials[1000]
    session.trials[4].levels.append(level(8))  # a copy taken is never changed by the loop changing its trial
    assert len(second.trials[4].levels) == 1


def test_a_saver_writes_every_change_with_copies_kept_between_saves(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    session = Session(host="h", unit="u.service")
    for i in range(1, 51):
        session.add(Trial(id=i, unit_text=UNIT, status="ok", levels=[level(1)]))
    saver = saver_for(path)
    saver.save(session)
    saver.flush(timeout_s=60)
    session.trials[10].notes = "fast"
    session.trials[20].levels.append(level(4))
    saver.save(session)
    saver.flush(timeout_s=60)
    saved = load_session(path)
    assert saved.trials[10].notes == "fast" and [lv.concurrency for lv in saved.trials[20].levels] == [1, 4]
    assert len(saved.trials) == 50


async def test_the_saves_of_one_frame_make_one_snapshot_and_the_file_holds_the_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level's end and its trial's (and a parallel sweep's hosts) save within one frame: each save walked every
    trial on the panel's thread (0.5–1.5 ms at 1,000 trials). `save_soon` takes one snapshot at the frame's end, of
    the newest state; a flush right after the saves (the panel's exit, ctrl+s) takes it at once, never losing it."""
    from specdec_tui.loop import session_saver

    taken: list[int] = []
    real = session_saver.snapshot

    def counted(session: Session, earlier: Copied | None = None) -> Session:
        taken.append(len(session.trials))
        return real(session, earlier)

    monkeypatch.setattr(session_saver, "snapshot", counted)
    path = tmp_path / "s.toml"
    session = Session(host="h", unit="u.service")
    saver = saver_for(path)
    for i in range(1, 4):
        session.add(Trial(id=i, unit_text=UNIT, status="ok"))
        saver.save_soon(session)
    assert taken == [] and not saver.idle  # nothing walked yet, and nobody takes the file for written
    await asyncio.sleep(0.1)
    assert taken == [3]  # one snapshot, of the newest state
    saver.flush(timeout_s=30)
    assert [t.id for t in load_session(path).trials] == [1, 2, 3]
    session.add(Trial(id=4, unit_text=UNIT, status="ok"))
    saver.save_soon(session)
    saver.flush(timeout_s=30)  # before the frame's end: the flush takes the deferred save itself
    assert taken == [3, 4] and [t.id for t in load_session(path).trials] == [1, 2, 3, 4]
    await asyncio.sleep(0.1)
    assert taken == [3, 4]  # the frame's end found nothing left to do


def test_a_save_deferred_when_the_process_ends_is_written_by_the_exit(tmp_path: Path) -> None:
    """The event loop ends within the frame of a `save_soon` (the panel quit right after a level): the interpreter's
    exit writes it (`session_saver._flush_all`), the file holds the last trial."""
    path = tmp_path / "s.toml"
    code = ("import asyncio, sys\n"
            "from pathlib import Path\n"
            "from specdec_tui.core.session import Session, Trial\n"
            "from specdec_tui.loop.session_saver import saver_for\n"
            "async def main():\n"
            "    session = Session(host='h', unit='u.service')\n"
            "    for i in (1, 2):\n"
            f"        session.add(Trial(id=i, unit_text={UNIT!r}, status='ok'))\n"
            "        saver_for(Path(sys.argv[1])).save_soon(session)\n"
            "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert [t.id for t in load_session(path).trials] == [1, 2]
