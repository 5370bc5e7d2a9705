"""What the first trial will need, made ready off the event loop once the server is ready (issue 34).

- The bench engine: `loop.trial` imports it with the first benchmark (aiohttp and its TLS contexts: ~0.3 s on an
  idle core, over a second on a loaded 2-core machine), on the panel's event loop, and every key typed meanwhile
  waited (seen with pyinstrument in bench/sweep_keys.py). Imported here on a worker thread first, the loop finds it
  loaded; a benchmark started before it is done waits on the import lock, as it waited for the import before.
- The session file's text: the saver keeps each trial's table once made (`loop.session_saver`), but its first save
  made all of them, ~1 s of a 1,000-trial session holding the GIL mid-sweep. `SessionSaver.prime` has its thread
  make them now."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from textual.worker import Worker

from specdec_tui.core.session import Session

BENCH_MODULES = ("specdec_tui.bench.engine",)


def _import_all() -> None:
    for name in BENCH_MODULES:
        importlib.import_module(name)


class WarmupWorkers(Protocol):
    """Where the import's thread worker runs: the app (any Textual `App` is one)."""

    def run_worker(self, work: Callable[[], None], *, name: str, group: str, thread: bool,
                   exit_on_error: bool) -> Worker[None]: ...


class FirstTrialWarmup:
    """Starts both once per panel (`start`); later calls do nothing. Handed only where its worker runs."""

    def __init__(self, workers: WarmupWorkers) -> None:
        self.workers = workers
        self.started = False

    def start(self, session: Session, session_path: Path | None) -> None:
        if self.started:
            return
        self.started = True
        self.workers.run_worker(_import_all, name="bench warm-up", group="warm-up", thread=True, exit_on_error=False)
        if session_path is not None and session.trials:
            from specdec_tui.loop.session_saver import saver_for

            saver_for(session_path).prime(session)
