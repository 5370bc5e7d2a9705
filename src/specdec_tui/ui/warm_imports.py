"""The benchmark's modules imported on a thread once the server is ready, ahead of the first benchmark.

`loop.trial` imports the bench engine with the first benchmark (aiohttp and its TLS contexts: ~0.3 s on an idle
core, over a second on a loaded 2-core machine), on the panel's event loop: every key typed meanwhile waited for it
(issue 34, seen with pyinstrument in bench/sweep_keys.py). Imported here on a worker thread first, the loop finds
it loaded; a benchmark started before it is done waits on the import lock, as it waited for the import before."""

from __future__ import annotations

import importlib

from textual.app import App

BENCH_MODULES = ("specdec_tui.bench.engine",)


def _import_all() -> None:
    for name in BENCH_MODULES:
        importlib.import_module(name)


class BenchWarmup:
    """Starts the import once per panel (`start`); later calls do nothing."""

    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.started = False

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        self.app.run_worker(_import_all, name="bench warm-up", group="warm-up", thread=True, exit_on_error=False)
