"""SIGTERM and SIGHUP to the panel (its terminal closed, a `kill`) are an interrupt, as they are for the
headless commands (`cli.interrupts`): a running benchmark is cancelled (the loop records its trial cancelled), a
running sweep or replay is cancelled (it puts back the unit that ran before), and once they have finished the
panel exits with 128 + the signal, closing the host (the demo's server stops with it). By default either signal
ended the process on the spot: the trial left "running", the host on the value being tried, the demo's server
and the journal child orphaned.

A terminal that is gone (tmux killed, an SSH session cut) must not keep the panel alive either. The kernel's
hang-up sends SIGHUP and then SIGCONT; Textual takes SIGCONT as "resumed after ctrl+z" and starts writing to the
terminal again with a new writer thread, which dies on the dead terminal's first write (EIO); the next 30 writes
fill its queue and the shutdown blocked for ever in `WriterThread.stop` (seen in CI: panels with parent 1 that
then ignored SIGTERM too). So, on SIGHUP with the terminal gone, the panel's output is pointed at /dev/null before
Textual's SIGCONT handler runs (Python runs pending handlers in signal-number order, SIGHUP first); Textual's
own shutdown after `app.exit` is bounded (`EXIT_BOUND_S`: the session saved, then the process ends); and a second
signal during that shutdown ends the process at once. A second signal while the work is still being stopped
(a sweep putting its unit back) stops waiting for it and exits."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import stat
import sys
import termios
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker, WorkerCancelled, WorkerFailed

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.worker_manager import WorkerManager

    from specdec_tui.ui.host_link import HostLink


class StoppablePanel(Protocol):
    """What an orderly stop reads and calls of the panel (`SpecdecApp` is one; ui/app.py is not imported here)."""

    @property
    def built_link(self) -> HostLink | None: ...
    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def workers(self) -> WorkerManager: ...
    def run_worker(self, work: Coroutine[Any, Any, None], *, group: str) -> Worker[None]: ...
    def exit(self, *, return_code: int = 0) -> None: ...


AS_INTERRUPT = (signal.SIGTERM, signal.SIGHUP)
TEXTUAL_THREADS = ("textual-input", "textual-output")  # its driver's threads (not daemons): a live one holds the exit
EXIT_BOUND_S = 10.0  # Textual's shutdown (restore the terminal, stop its threads) takes well under a second
SAVE_BOUND_S = 10.0  # a forced exit first waits this long for the session's last save


@dataclass
class StopState:
    """This process's orderly stop: the first signal, whether Textual's shutdown began, its bound."""

    first: signal.Signals | None = None
    hurry: asyncio.Event = field(default_factory=asyncio.Event)  # a second signal: stop waiting for the work
    exiting: bool = False  # `app.exit` was called: only Textual's own shutdown is left
    bound: threading.Timer | None = None
    finished: bool = False  # `App.run` has returned: no app left to stop


_state = StopState()


def install(app: StoppablePanel) -> None:
    """From now on the two signals stop `app` in order (the real program only: not under Pilot). The handlers are
    Python-level (`signal.signal`), not the event loop's: they run even while the main thread is blocked outside
    the event loop (where a stuck shutdown would be), and the SIGHUP one must act before Textual's SIGCONT one."""
    event_loop = asyncio.get_running_loop()
    for sig in AS_INTERRUPT:
        signal.signal(sig, lambda signum, frame: _on_signal(app, event_loop, signal.Signals(signum), frame))


def _on_signal(app: StoppablePanel, event_loop: asyncio.AbstractEventLoop, sig: signal.Signals,
               frame: FrameType | None) -> None:
    if _state.finished or event_loop.is_closed():  # the app is gone; the program is closing what it held
        if sig is signal.SIGHUP and terminal_gone(sys.__stderr__):
            detach_output()
        if _state.first is not None:
            _force_exit(sig)  # a second signal: the user wants it over
        _state.first = sig
        return
    if _state.first is None:
        _state.first = sig
        if sig is signal.SIGHUP and terminal_gone(sys.__stderr__):
            detach_output()
        event_loop.call_soon_threadsafe(lambda: app.run_worker(_stop(app, sig), group="signal-exit"))
    elif _state.exiting:
        _force_exit(sig)  # Textual's shutdown is stuck (the main thread never came back to the event loop)
    else:
        event_loop.call_soon_threadsafe(_state.hurry.set)


def terminal_gone(stream: Any) -> bool:
    """Whether `stream` is a terminal that has been hung up (its fd is still a tty device, but the kernel answers
    every request with EIO), as opposed to a live terminal or no terminal at all (a pipe, /dev/null)."""
    try:
        fd = stream.fileno()
        if not stat.S_ISCHR(os.fstat(fd).st_mode):
            return False
        termios.tcgetattr(fd)
    except termios.error as err:
        return bool(err.args) and err.args[0] == errno.EIO
    except (OSError, ValueError, AttributeError):
        return False
    return False


def detach_output() -> None:
    """Point stdout and stderr at /dev/null: what the panel and Textual still write while stopping goes nowhere,
    instead of failing (and killing Textual's writer thread) on the dead terminal."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
    finally:
        os.close(null)


async def _stop(app: StoppablePanel, sig: signal.Signals) -> None:
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
    hurry = asyncio.create_task(_state.hurry.wait())
    for worker in pending:
        waited = asyncio.create_task(_wait(worker))
        await asyncio.wait({waited, hurry}, return_when=asyncio.FIRST_COMPLETED)
        if hurry.done():
            waited.cancel()
            break
    hurry.cancel()
    _state.exiting = True
    _state.bound = threading.Timer(EXIT_BOUND_S, _force_exit, [sig])
    _state.bound.daemon = True
    _state.bound.start()
    app.exit(return_code=128 + sig)


async def _wait(worker: Worker[Any]) -> None:
    try:
        await worker.wait()
    except (WorkerCancelled, WorkerFailed):
        pass  # cancelled is what was asked; a failure was said by the worker itself


def shutdown_finished() -> None:
    """`App.run` has returned: the bound on Textual's shutdown is lifted (closing the host may take its time), and
    Textual's ctrl+z handlers go. A hang-up during the panel's own exit (the operator quits, then closes the
    terminal: SIGHUP, then SIGCONT) made Textual's driver "resume" on the dead terminal — new input and output
    threads the interpreter waited for at exit, the input one spinning on the hung-up tty (an orphan panel at 90 %
    of a core for 35 minutes, found on a newcomer pass with py-spy). If that already happened, the bound stays."""
    _state.finished = True
    for sig in (signal.SIGCONT, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_DFL)
    if _state.bound is not None:
        _state.bound.cancel()
    if any(t.name in TEXTUAL_THREADS and t.is_alive() and not t.daemon for t in threading.enumerate()):
        _state.bound = threading.Timer(EXIT_BOUND_S, _force_exit, [_state.first or signal.SIGHUP])
        _state.bound.daemon = True
        _state.bound.start()


def _force_exit(sig: signal.Signals) -> None:
    """Textual's shutdown did not finish: the session's last save is waited for (os._exit skips atexit), then
    the process ends. The demo's server follows (its supervisor watches this process), as does the journal child
    (its stdin closes)."""
    from specdec_tui.loop.session_saver import flush_all

    try:
        os.write(2, f"specdec-tui: the panel's shutdown did not finish; exiting ({sig.name}).\n".encode())
    except OSError:
        pass
    for words in flush_all(SAVE_BOUND_S):  # a session its file refused went to a rescue copy: said where
        try:
            os.write(2, f"specdec-tui: {words}\n".encode())
        except OSError:
            pass
    os._exit(128 + sig)
