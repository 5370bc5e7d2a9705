"""ui.signal_exit tells a hung-up terminal (the panel must stop writing to it) from a live one and from no
terminal at all (a pipe: `serve`'s panels, output redirected), on real pseudo-terminals."""

from __future__ import annotations

import os
import pty

from specdec_tui.ui.signal_exit import terminal_gone


class Fd:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


def test_a_live_terminal_is_not_gone_and_a_hung_up_one_is() -> None:
    master, slave = pty.openpty()
    try:
        assert not terminal_gone(Fd(slave))
        os.close(master)  # the terminal emulator (tmux, sshd) is gone
        assert terminal_gone(Fd(slave))
    finally:
        os.close(slave)


def test_a_pipe_or_a_closed_stream_is_not_a_gone_terminal() -> None:
    read, write = os.pipe()
    try:
        assert not terminal_gone(Fd(write))
    finally:
        os.close(read)
        os.close(write)
    assert not terminal_gone(Fd(10_000))  # not open at all
    assert not terminal_gone(None)


def test_once_the_panel_has_run_a_hang_up_cannot_resume_textuals_driver() -> None:
    """The operator quit, then closed the terminal while the panel was still closing: the hang-up's SIGCONT reached
    Textual's ctrl+z handler, which "resumed" its driver on the dead terminal — an input thread spinning on the
    hung-up tty that the interpreter waited for at exit (an orphan at 90 % of a core for 35 minutes). Once
    `App.run` has returned, SIGCONT and SIGTSTP are the system's again."""
    import signal

    from specdec_tui.ui import signal_exit

    resumed: list[int] = []
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGCONT, signal.SIGTSTP)}
    signal.signal(signal.SIGCONT, lambda *_: resumed.append(1))  # as Textual's LinuxDriver puts its own
    signal.signal(signal.SIGTSTP, lambda *_: resumed.append(2))
    try:
        signal_exit.shutdown_finished()
        assert signal.getsignal(signal.SIGCONT) == signal.SIG_DFL
        assert signal.getsignal(signal.SIGTSTP) == signal.SIG_DFL
        os.kill(os.getpid(), signal.SIGCONT)  # a hang-up's second signal: nothing resumes
        assert resumed == []
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        signal_exit._state = signal_exit.StopState()
