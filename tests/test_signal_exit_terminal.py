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
