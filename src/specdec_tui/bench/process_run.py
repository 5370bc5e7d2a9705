"""The benchmark in its own process, so a busy caller (a UI redrawing, the GIL held by another thread)
cannot delay the engine's arrival timestamps: `ProcessRun` has the same interface as `BenchRun`.

The child is started with the spawn context (no fork of a process that has threads and event loops),
runs `drive_benchmark` on its own loop and sends each event over a pipe. The parent reads the pipe on
a small thread and calls `on_event` there, just as `BenchRun` does on its engine thread. Cancelling
sends a word down the pipe; the child cancels its run (every connection closed), sends the final
RunDone and exits. If the parent goes away, the child sees the pipe close and cancels itself.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from multiprocessing.connection import Connection

from specdec_tui.bench.drive import drive_benchmark
from specdec_tui.bench.events import BenchEvent, LevelDone, RunDone
from specdec_tui.bench.run_handle import RunHandle
from specdec_tui.core.config import BenchProfile

CANCEL = "cancel"
KILL_AFTER_S = 15.0  # a child that has not exited this long after a cancel is killed


def child_main(conn: Connection, base_url: str, profile: BenchProfile, api_key: str | None, model: str | None) -> None:
    """Entry point in the spawned process."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_parent_word() -> None:  # "cancel", or the pipe closed because the parent is gone
            loop.remove_reader(conn.fileno())
            task.cancel()

        def emit(ev: BenchEvent) -> None:
            try:
                conn.send(ev)
            except OSError:  # the parent is gone: nobody to measure for
                task.cancel()

        loop.add_reader(conn.fileno(), on_parent_word)
        await drive_benchmark(base_url, profile, emit, api_key=api_key, model=model)

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        pass
    except Exception as exc:  # noqa: BLE001 - reported in words to the parent, never a traceback
        try:
            conn.send(RunDone([], False, f"benchmark engine failed: {type(exc).__name__}: {exc}"))
        except OSError:
            pass
    finally:
        conn.close()


class ProcessRun(RunHandle):
    """A benchmark in a spawned process. `on_event` runs on a reader thread of this process; `on_exit`
    once, after the last event, when the child has exited (so every connection is closed)."""

    thread_name = "specdec-bench-pipe"

    def _setup(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, self._child_conn = ctx.Pipe(duplex=True)
        child_args = (self._child_conn, self._base_url, self._profile, self._api_key, self._model)
        self._process = ctx.Process(target=child_main, args=child_args, name="specdec-bench", daemon=True)
        self._cancelled = False

    def start(self) -> ProcessRun:
        self._process.start()
        self._child_conn.close()  # the child holds its own copy; ours would keep the pipe open
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Thread-safe; the child closes its requests, then RunDone(cancelled=True) is emitted."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            try:
                self._conn.send(CANCEL)
            except OSError:
                pass
        timer = threading.Timer(KILL_AFTER_S, self._kill_if_alive)
        timer.daemon = True
        timer.start()

    def _kill_if_alive(self) -> None:
        if self._process.is_alive():
            self._process.kill()

    def _main(self) -> None:
        finished = False
        try:
            while True:
                try:
                    ev = self._conn.recv()
                except (EOFError, OSError):
                    break
                if isinstance(ev, LevelDone):
                    self.levels.append(ev.result)
                finished = finished or isinstance(ev, RunDone)
                self._on_event(ev)
            self._process.join()
            if not finished:
                code = self._process.exitcode
                self._on_event(RunDone(self.levels, self._cancelled, f"the benchmark process ended unexpectedly (exit code {code})"))
        finally:
            self._conn.close()
            self._exited()
