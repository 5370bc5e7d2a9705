"""SIGTERM and SIGHUP to the panel (its terminal closed, a `kill`) are an interrupt, as they are for the
headless commands (`cli.interrupts`): a running benchmark is cancelled (the loop records its trial cancelled), a
running sweep or replay is cancelled (it puts back the unit that ran before), and once they have finished the
panel exits with 128 + the signal, closing the host (the demo's server stops with it). By default either signal
ended the process on the spot: the trial left "running", the host on the value being tried, the demo's server
and the journal child orphaned."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerCancelled, WorkerFailed

if TYPE_CHECKING:
    from specdec_tui.ui.app import SpecdecApp

AS_INTERRUPT = (signal.SIGTERM, signal.SIGHUP)


def install(app: SpecdecApp) -> None:
    """From now on the two signals stop `app` in order (the real program only: not under Pilot)."""
    loop = asyncio.get_running_loop()
    for sig in AS_INTERRUPT:
        loop.add_signal_handler(sig, _interrupted, app, sig)


_stopping: list[signal.Signals] = []


def _interrupted(app: SpecdecApp, sig: signal.Signals) -> None:
    if not _stopping:  # a second signal while stopping: the first one's stop goes on
        _stopping.append(sig)
        app.run_worker(_stop(app, sig), group="signal-exit")


async def _stop(app: SpecdecApp, sig: signal.Signals) -> None:
    from specdec_tui.ui.screens.task_screen import TaskScreen

    pending: list[Worker[Any]] = []
    link = app.built_link
    if link is not None and link.bench_worker is not None:
        pending.append(link.bench_worker)
        link.cancel_bench()
    for screen in app.screen_stack:
        if isinstance(screen, TaskScreen) and screen.running:
            tasks = [w for w in app.workers if w.group == screen.TASK]
            pending += tasks
            for worker in tasks:
                worker.cancel()
    for worker in pending:
        try:
            await worker.wait()
        except (WorkerCancelled, WorkerFailed):
            pass  # cancelled is what was asked; a failure was said by the worker itself
    app.exit(return_code=128 + sig)
