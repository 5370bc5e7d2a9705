"""Running a benchmark away from the caller's loop, so the caller's rendering cannot delay arrival timestamps.

Two ways in:
- `run_benchmark(base_url, profile, ...)`: an async iterator of `BenchEvent`s usable from any asyncio
  loop (Textual's included). The measuring runs in its own thread and event loop (`BenchRun`), so the
  caller's rendering cannot delay arrival timestamps. Cancelling the iterating task, or `aclose()` on
  the iterator, cancels the run and waits until every in-flight request is closed.
- `BenchRun(base_url, profile, on_event).start()` / `.cancel()` / `.join()`: the same from plain
  threads; `on_event` is called on the engine thread. `ProcessRun` is the same in a spawned process.
`drive.drive_benchmark(...)` is the coroutine both use, for callers that want it on their own loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, LevelDone, RunDone
from specdec_tui.bench.process_run import ProcessRun
from specdec_tui.bench.run_handle import RunHandle
from specdec_tui.core.config import BenchProfile


class BenchRun(RunHandle):
    """A benchmark on its own thread and event loop. `on_event` runs on that thread; `on_exit` once,
    after the last event, when every connection is closed."""

    def _setup(self) -> None:
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancel_requested = False

    def cancel(self) -> None:
        """Thread-safe; in-flight requests are closed, then RunDone(cancelled=True) is emitted."""
        with self._lock:
            self._cancel_requested = True
            if self._event_loop is not None and self._task is not None and not self._event_loop.is_closed():
                self._event_loop.call_soon_threadsafe(self._task.cancel)

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # noqa: BLE001 - reported in words, never a thread traceback
            self._on_event(RunDone(self.levels, False, f"benchmark engine failed: {type(exc).__name__}: {exc}"))
        finally:
            self._exited()

    async def _run(self) -> None:
        with self._lock:
            self._event_loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            if self._cancel_requested:
                self._on_event(RunDone([], True))
                return

        def emit(ev: BenchEvent) -> None:
            if isinstance(ev, LevelDone):
                self.levels.append(ev.result)
            self._on_event(ev)

        await drive_benchmark(self._base_url, self._profile, emit, api_key=self._api_key, model=self._model)


class _Exited:
    """The marker `on_exit` puts on the queue after the run's last event."""


_EXITED = _Exited()


Isolation = Literal["thread", "process"]


async def run_benchmark(
    base_url: str,
    profile: BenchProfile,
    *,
    api_key: str | None = None,
    model: str | None = None,
    isolation: Isolation = "thread",
) -> AsyncIterator[BenchEvent]:
    """Async iterator of events from a benchmark measured on its own thread (or, with
    isolation="process", in its own spawned process: no caller work shares its GIL, at the price of
    a process start, ~0.1-0.3 s CPU per run); the last event is RunDone."""
    if isolation not in ("thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', not {isolation!r}")
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[BenchEvent | _Exited] = asyncio.Queue()

    def hand_over(item: BenchEvent | _Exited) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the caller's loop is gone; nothing left to tell
            pass

    runner = BenchRun if isolation == "thread" else ProcessRun
    run = runner(base_url, profile, hand_over, api_key=api_key, model=model, on_exit=lambda: hand_over(_EXITED))
    run.start()
    exited = False
    try:
        while True:
            item = await queue.get()
            if isinstance(item, _Exited):
                exited = True
                return
            yield item
            if isinstance(item, RunDone):
                continue  # wait for the exit marker so the run is fully closed when we return
    finally:
        if not exited:
            run.cancel()
            while (await queue.get()) is not _EXITED:
                pass
