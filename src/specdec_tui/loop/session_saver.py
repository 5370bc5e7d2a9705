"""Session files written off the event loop, coalesced (issue 34: `TrialLoop.record` rewrote and fsynced the whole
file on every finished level, on the panel's event loop: ~280 ms a save at 200 trials, keys waiting behind it).

One saver per file (`saver_for`), so the trial loops of a parallel sweep, which share one session, never write it
at once. `save(session)` takes a snapshot on the caller's thread (the trials and their levels copied shallowly, as
the loop may go on changing them; a trial unchanged since the last snapshot keeps its copy) and returns; one writer
thread serialises and writes the newest snapshot (older ones not yet written are skipped: only the last state
matters). The file is the text `core.session.dumps_session` makes, kept in pieces (`loop.session_text`): each
trial's `[[trials]]` table is kept encoded while the trial does not change (a finished trial does not), so a save
at 1,000 trials makes one table and writes the rest as they are (bench/session_writes.py: ~20 M instructions a
write at 1,000 trials, 12 M at 10). Written as `save_session` does: a temp file, fsync and rename, so the file is
always a complete, valid session — the last one written; what a crash (or SIGKILL) loses is the saves not yet
written: at most the snapshot being written and the newest one waiting behind it, never a flushed one. A failed
write is kept and raised to the next `save` or `flush` (the loop's next step says it in words); `flush` waits until
the newest snapshot is on disk (the headless commands, ctrl+s and the panel's exit); at interpreter exit whatever is
pending is written."""

from __future__ import annotations

import atexit
import copy
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.session import Session, SessionError, Trial, merge_from_disk, merged_from_disk
from specdec_tui.core.session_cache import read_cached, write_indexed
from specdec_tui.core.session_merge import DiskStamp, disk_stamp, session_lock
from specdec_tui.loop.session_text import Mark, SessionText, marks

RETRY_S = 1.0  # a failed write is tried again after this long (or at once on a newer save)
FRAME_S = 1 / 60  # `save_soon`: the saves of one frame make one snapshot (each walks every trial on the caller's thread)
_SAVERS: dict[Path, SessionSaver] = {}
_SAVERS_LOCK = threading.Lock()


def saver_for(path: Path) -> SessionSaver:
    """The one saver of `path` in this process."""
    key = Path(path).absolute()
    with _SAVERS_LOCK:
        saver = _SAVERS.get(key)
        if saver is None:
            saver = _SAVERS[key] = SessionSaver(key)
        return saver


@dataclass(slots=True)
class Copied:
    """The trials of the last snapshot (`snapshot`), position by position: the session's, their marks, their copies."""

    trials: list[Trial] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    copies: list[Trial] = field(default_factory=list)


def snapshot(session: Session, earlier: Copied | None = None) -> Session:
    """A copy the writer can read while the loop changes the original: the session, its trials and their level
    lists are copied; their values (results, facts, profiles, texts) are not changed once made, so they are shared.
    `earlier`: the last snapshot's trials (refilled here): a trial at the same place, the same object with the same
    `session_text.mark`, keeps its copy — a save at 1,000 trials copied every one on the panel's event loop, ~5-10 ms
    a save in the middle of a sweep, for the one trial that changed; and the unchanged are found by one comprehension,
    not a loop of lookups a trial (~1 ms a save at 1,000 trials, issue 34)."""
    copied = copy.copy(session)
    trials = list(session.trials)
    now = marks(trials)
    if earlier is None:
        copied.trials = [_copy(trial) for trial in trials]
        return copied
    copies = earlier.copies[:len(trials)]
    changed = [n for n, (trial, mark, was, was_mark) in enumerate(zip(trials, now, earlier.trials, earlier.marks,
                                                                       strict=False))
               if trial is not was or mark != was_mark]
    copies += map(_copy, trials[len(copies):])
    for n in changed:
        copies[n] = _copy(trials[n])
    earlier.trials, earlier.marks, earlier.copies = trials, now, copies
    copied.trials = list(copies)
    return copied


def _copy(trial: Trial) -> Trial:
    one = copy.copy(trial)
    one.levels = list(trial.levels)
    return one


class SessionSaver:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._text = SessionText()  # the writer thread's own
        self._lock = threading.Lock()
        self._pending: tuple[Session, Session] | None = None  # (the caller's session, its snapshot)
        self._pending_is_prime = False  # the pending snapshot is only to be made into text (`prime`), not written
        self._writer: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._error: SessionError | None = None
        # a failed write (disk full, directory gone) is retried every RETRY_S, or at once on a newer save, until it succeeds
        self._failing = ""  # the last write's failure in words; "" once a write succeeded
        self._wake = threading.Event()  # a newer save: retry now
        self._handed = 0  # snapshots handed to the writer
        self._tried = 0  # the newest of them the writer has tried to write
        self.latest: Session | None = None  # the newest snapshot handed over (what a rescue copy holds)
        self.rescue_to: tuple[Path, ...] = ()  # where a rescue copy would go, as the process said when a write failed
        self.rescued: Session | None = None  # the snapshot a rescue copy was made of (a later flush does not repeat it)
        # the session this saver wrote last and the file's stamp right after: while the file is still that write, it
        # holds nothing that session lacks (see `_own_write`)
        self._written: tuple[Session, DiskStamp] | None = None
        self._copies = Copied()  # the trials' copies in the last snapshot (`snapshot`)
        self._copies_lock = threading.Lock()  # callers on two threads (a headless verb and an exit flush) take turns
        self.writes = 0  # files written (a burst of saves makes fewer)
        self._soon: Session | None = None  # `save_soon`'s session, not yet snapshotted (`take_deferred` does it)

    def save(self, session: Session) -> None:
        """Have `session` (as it is now) written soon; raises an earlier write's error (after handing this one over)."""
        # A stat: the lock only when the file moved, not by this saver's own write, and only with no write on its way:
        # that one merges into what it writes, this session takes the file's trials at the next save once it is done
        # (waiting here for its lock held the caller — the panel's event loop — for the whole write).
        now = disk_stamp(self.path)
        if now not in (None, session.disk_stamp) and self._idle.is_set() and not self._own_write(session, now):
            try:  # what other processes saved meanwhile joins this session first (issue 36: no trial lost)
                with session_lock(self.path):
                    merge_from_disk(session, self.path)
            except OSError:
                pass  # the write says it in words
        self._hand_over(session, self._snapshot(session), prime=False)
        self._raise_error()

    def save_soon(self, session: Session) -> None:
        """`save` once at the end of this frame for every call made in it (a level's end and its trial's come
        together; a parallel sweep's hosts too): one snapshot, one stat. On an event loop; with none, `save` now.
        `flush`, the exit's flush and `idle` see a deferred save as pending; raises an earlier write's error."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.save(session)
            return
        with self._lock:
            first, self._soon = self._soon is None, session
        if first:
            loop.call_later(FRAME_S, self._deferred_now)
        self._raise_error()

    def _deferred_now(self) -> None:
        try:
            self.take_deferred()
        except SessionError:
            pass  # kept in `failing` until a write succeeds: the trial loop's watch says it (`TrialLoop._follow_saver`)

    def take_deferred(self) -> None:
        """Hand a deferred `save_soon` over now (a flush, the exit), on the thread that changes the session, or
        once nothing does (the loop has ended); nothing when there is none."""
        with self._lock:
            session, self._soon = self._soon, None
        if session is not None:
            self.save(session)

    def prime(self, session: Session) -> None:
        """Have the writer thread make `session`'s text without writing it, so its trials' tables are kept before
        the first save: that one then serialises what changed, not every trial (a 1,000-trial session's first
        save held the GIL ~1 s in the middle of a sweep, issue 34). A session as its file holds it takes the file's
        own tables (`_adopt_file`). Nothing is done if a save is on its way."""
        self._hand_over(session, self._snapshot(session), prime=True)

    def _snapshot(self, session: Session) -> Session:
        with self._copies_lock:
            return snapshot(session, self._copies)

    def _hand_over(self, session: Session, taken: Session, *, prime: bool) -> None:
        with self._lock:
            if prime and self._pending is not None:
                return  # a save is pending: it makes the tables itself
            self._pending, self._pending_is_prime = (session, taken), prime
            if not prime:
                self._handed += 1
                self.latest = taken
            self._idle.clear()
            self._wake.set()
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_pending, name=f"session-saver {self.path.name}",
                                                 daemon=True)
                self._writer.start()

    def flush(self, timeout_s: float | None = None) -> None:
        """Wait until the newest session saved is on disk; raises a write's error (SessionError, in words) as soon
        as the newest save's write failed (it is retried meanwhile: `failing`)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self.take_deferred()
        with self._lock:
            newest = self._handed
        while not self._idle.wait(0.05):
            with self._lock:
                failed = self._failing if self._tried >= newest else ""
            if failed:
                self._raise_error()
                raise SessionError(failed)
            if deadline is not None and time.monotonic() > deadline:
                raise SessionError(f"the session {self.path} is still being written after {timeout_s:g} s")
        self._raise_error()

    @property
    def failing(self) -> str:
        """The failure of the last write, in words, while the session is not on disk; "" once it is."""
        with self._lock:
            return self._failing

    @property
    def idle(self) -> bool:
        """Nothing is waiting to be written (no save deferred or on its way, no failed write being retried)."""
        return self._idle.is_set() and self._soon is None

    def _adopt_file(self, session: Session) -> bool:
        """`prime` from the file itself when `session` is what it holds (read or written as it is on disk now): its
        tables cut out of the text, where making them (`SessionText.pieces`) was ~1 s of pure Python at 1,000 trials
        that took the GIL from the panel in turns while it started (issue 34)."""
        try:
            with session_lock(self.path):
                if session.disk_stamp is None or disk_stamp(self.path) != session.disk_stamp:
                    return False
                text = self.path.read_text(encoding="utf-8")
                cached = read_cached(self.path, session.disk_stamp)
        except (OSError, UnicodeDecodeError):
            return False
        return self._text.adopt(text, session, cached)

    def _adopt_text(self, session: Session) -> None:
        """`_adopt_file` for the writer, which holds the file's lock already."""
        try:
            self._text.adopt(self.path.read_text(encoding="utf-8"), session, read_cached(self.path, session.disk_stamp))
        except (OSError, UnicodeDecodeError):
            pass  # the tables are made instead

    def _own_write(self, session: Session, stamp: DiskStamp | None) -> bool:
        """The file is still this saver's last write of `session`. A save made while that write was on its way took
        a snapshot whose stamp was the one before it (and the caller may look between the rename and the stamp being
        set): without this, each such save read the whole file back to merge it — a 1,000-trial session parsed in
        pure Python, seconds of the GIL taken from the panel's keys in the middle of a sweep (issue 34)."""
        with self._lock:
            written = self._written
        return written is not None and written[0] is session and written[1] == stamp

    def _raise_error(self) -> None:
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _write_pending(self) -> None:
        while True:
            with self._lock:
                pending, self._pending, prime = self._pending, None, self._pending_is_prime
                tried = self._handed
                if pending is None:  # nothing newer came while the last one was written: done until the next save
                    self._writer = None
                    self._idle.set()
                    return
            live, session = pending
            try:
                if prime:
                    if not self._adopt_file(session):
                        self._text.pieces(session)
                    continue
                with session_lock(self.path):
                    # another process saved since the caller's merge: its trials go in too (the caller's session
                    # takes them at its next save, when the file's stamp is not the one it knows)
                    if self._own_write(live, before := disk_stamp(self.path)):
                        session.disk_stamp = before  # the file is this saver's last write of it: nothing to take in
                    if not self._text.has_tables and session.disk_stamp is not None and session.disk_stamp == before:
                        self._adopt_text(session)  # a first save of the file as this process read it
                    foreign, disk = merged_from_disk(session, self.path)
                    if disk is not None:  # the file's own tables for its trials as they are (issue 36)
                        self._text.adopt_merged(session, self.path, disk)
                    write_atomic(self.path, self._text.pieces(session, copies=disk is None))
                    after = disk_stamp(self.path)
                    if self._text.parts is not None:
                        write_indexed(self.path, self._text.head, self._text.parts, after)
                    with self._lock:  # a write that took in another process's trials holds what `live` lacks
                        self._written = (live, after) if after is not None and not foreign else None
                    if not foreign:
                        live.disk_stamp = after
                self.writes += 1
                with self._lock:
                    # written: an earlier failure is over (not raised to the next save as if it were not)
                    self._failing, self._error, self._tried = "", None, max(self._tried, tried)
            except OSError as err:
                from specdec_tui.loop.session_rescue import failure_words, rescue_folders
                words = failure_words(self.path, err)
                self.rescue_to = self.rescue_to or rescue_folders()  # the data dir of now (a test's own, under pytest)
                with self._lock:
                    self._error, self._failing, self._tried = SessionError(words), words, max(self._tried, tried)
                    if self._pending is None and not prime:
                        self._pending, self._pending_is_prime = pending, False  # tried again, unless a newer save came
                    self._wake.clear()
                self._wake.wait(RETRY_S)
            except Exception as err:  # noqa: BLE001 - a bug in writing must not kill the writer silently
                with self._lock:
                    self._error = SessionError(f"could not save session {self.path}: {err}")


def flush_all(timeout_s: float) -> list[str]:
    """Waits (at most `timeout_s` in all) until every saver's newest snapshot is written: at interpreter exit, and
    before a forced exit (`os._exit` skips atexit; ui.signal_exit); a file that refuses it: `loop.session_rescue`.
    Returns what was not saved where it belongs, in words."""
    from specdec_tui.loop.session_rescue import flush_or_rescue

    with _SAVERS_LOCK:
        savers = list(_SAVERS.values())
    return flush_or_rescue(savers, timeout_s)


@atexit.register
def _flush_all() -> None:
    """Pending saves are written before the process ends (daemon writers stop mid-way); a refused one said on stderr."""
    import sys

    for words in flush_all(30):
        print(f"specdec-tui: {words}", file=sys.stderr)
