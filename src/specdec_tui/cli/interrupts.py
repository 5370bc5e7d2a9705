"""SIGTERM and SIGHUP end a headless command the way Ctrl+C does: an interrupt, not a kill. A sweep, a demo
or a benchmark then restores the unit that ran before, records the trial under way cancelled and exits
non-zero (128 + the signal), where the default action ended the process on the spot (the host left on an
experimental unit, the trial "running" for ever)."""

from __future__ import annotations

import signal
from types import FrameType

AS_INTERRUPT = (signal.SIGTERM, signal.SIGHUP)
_received: list[signal.Signals] = []


def treat_as_interrupt() -> None:
    """From now on SIGTERM and SIGHUP do what SIGINT's handler does: inside asyncio.run, cancel the command's
    task (its cleanup runs); outside it, raise KeyboardInterrupt. A SIGINT ignored on start (a job a shell
    started in the background) gets Python's handler back: asyncio.run only cancels its task through that one,
    and a KeyboardInterrupt raised into the loop lands in whichever task runs (a traceback, cleanup skipped)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in AS_INTERRUPT:
        signal.signal(sig, _interrupt)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    _received.append(signal.Signals(signum))
    # Python's default_int_handler, asyncio.run's, or a loop's add_signal_handler (aiohttp's run_app, which
    # reads it from the wakeup fd): raising the signal reaches whichever it is
    signal.raise_signal(signal.SIGINT)


def interrupted_by() -> signal.Signals:
    """The signal that interrupted the command: the first SIGTERM/SIGHUP received, else SIGINT."""
    return _received[0] if _received else signal.SIGINT
