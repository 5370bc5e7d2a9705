"""The floor for `cold_start.py` and the anchor of `idle_cpu.py`: the smallest Textual app that draws the same kind
of frame as the panel (nothing in it wakes on its own).

A header, one line of text and the footer with a quit key, run as its own script: what is left is Python's
start, Textual's import, its driver and one compose/mount/paint. Nothing the panel does can start faster than
this on the same machine, so `cold_start.py` judges the panel by its ratio to this app measured in the same
run (machine load then hits both alike) rather than by an absolute figure.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class MinimalApp(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("minimal")
        yield Footer()


if __name__ == "__main__":
    MinimalApp().run()
