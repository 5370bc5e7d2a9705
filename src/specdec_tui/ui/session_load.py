"""The rest of a long session, loaded after the panel's first frame (issue 36: a 10,000-trial session held the
first frame for seconds while ~300,000 result objects were built).

The panel opens with the session's own fields and its newest trial (`core.session_index.read_head`); this reads
the whole file in a thread worker, says so in the header meanwhile, and then joins the two as a save joins
another writer's trials (`core.session_merge.merge_into`): the file's trials in its order, then any trial started
here before they were in. Until then the session carries no disk stamp, so a save merges the file first and never
writes the part over the whole."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from specdec_tui.core.session import Session, SessionError, load_session
from specdec_tui.core.session_merge import merge_into

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.worker import Worker

    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.ui.gc_policy import HeapKeeper

Loader = Callable[[Path], Session]


class LoadingPanel(Protocol):
    """What the load reads and calls of the panel (`SpecdecApp` is one)."""

    session: Session
    session_path: Path | None
    heap: HeapKeeper | None  # set once the panel froze its start-up heap (the real program, ui.gc_policy)

    @property
    def sub_title(self) -> str: ...
    @sub_title.setter
    def sub_title(self, value: str) -> None: ...
    @property
    def trial_loop(self) -> TrialLoop | None: ...
    def show_trials(self) -> None: ...
    def run_worker(self, work: Callable[[], None], *, name: str, group: str, thread: bool,
                   exit_on_error: bool) -> Worker[None]: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...
    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...
    def notify(self, message: str, *, severity: SeverityLevel = "information", timeout: float | None = None) -> None: ...


class SessionLoad:
    """One load of the session `app` opened with (`start`, once its first frame is up)."""

    def __init__(self, app: LoadingPanel, path: Path, count: int, loader: Loader | None = None) -> None:
        self.app = app
        self.path = path
        self.count = count
        self.loader = loader if loader is not None else load_session
        self.session = app.session  # the part it opened with: the one joined when the rest is in
        self.done = False
        self._sub_title = app.sub_title

    def start(self) -> None:
        self.app.sub_title = f"{self._sub_title} · loading {self.count:,} trials…"
        self.app.run_worker(self._load, name="session load", group="session-load", thread=True, exit_on_error=False)

    def _load(self) -> None:
        try:
            whole = self.loader(self.path)
        except SessionError as err:
            self.app.call_from_thread(self._failed, err)
            return
        self.app.call_from_thread(self._loaded, whole)

    def _loaded(self, whole: Session) -> None:
        self.done = True
        app = self.app
        if app.session is not self.session:
            return  # the panel went to another host's session meanwhile
        merge_into(self.session, whole)
        if self.session.disk_stamp is None:  # no save merged the file meanwhile: it is now the file as read
            self.session.disk_stamp = whole.disk_stamp
        app.sub_title = self._sub_title
        app.show_trials()
        say_interrupted(app, [i for i in whole.interrupted if i not in self.session.interrupted])
        if app.session_path is not None:
            from specdec_tui.loop.session_saver import saver_for

            saver_for(app.session_path).prime(self.session)  # the first save then writes what changed only
        if app.heap is not None:  # the trials (and the saver's copies) live as long as the panel: frozen, not walked
            from specdec_tui.ui.gc_policy import freeze_loaded

            app.call_after_refresh(freeze_loaded)  # after the frame that shows them: the table's rows made too

    def _failed(self, err: SessionError) -> None:
        self.done = True
        app = self.app
        if app.session is not self.session:
            return
        app.sub_title = self._sub_title
        app.session_path = None  # a save would replace the file it could not read with the part it opened with
        if app.trial_loop is not None:
            app.trial_loop.session_path = None
        app.notify(f"The session's other trials could not be read: {err}. Trials run now are not saved; the file "
                   "is left as it is.", severity="error", timeout=30)


def load_rest(app: LoadingPanel, count: int | None) -> SessionLoad | None:
    """Once every tab is built: the trials read as interrupted said (once), and the rest of a long session (`count`
    trials, None when it opened whole) read on a thread; the load, when one started."""
    if app.session.interrupted:
        say_interrupted(app, app.session.interrupted)
    if count is None or app.session_path is None:
        return None
    load = SessionLoad(app, app.session_path, count)
    load.start()
    return load


def say_interrupted(app: LoadingPanel, ids: list[int]) -> None:
    """Say once, at the start that found them, the trials read as interrupted (`core.trial_writer`), and save
    them so: the file said "running" and the next start says nothing more."""
    trials = [t for t in app.session.trials if t.id in ids]
    if not trials:
        return
    from specdec_tui.core.trial_writer import interrupted_words

    app.notify(interrupted_words(trials), severity="warning", timeout=30)  # plain text (PanelState.notify)
    if app.session_path is not None:
        from specdec_tui.loop.session_saver import saver_for

        with contextlib.suppress(SessionError):  # a file that takes no save: the next start says it again
            saver_for(app.session_path).save_soon(app.session)
