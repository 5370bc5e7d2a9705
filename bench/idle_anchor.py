"""The idle anchor for bench/idle_cpu.py: the smallest Textual app with the panel's frame (Header, a Static,
Footer) and nothing else, so the panel's idle CPU can be read against what Textual itself costs at rest.

    python bench/idle_anchor.py     # q quits
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class IdleAnchor(App[None]):
    BINDINGS = [("q", "quit", "Quit"), ("ctrl+p", "command_palette", "palette")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("idle anchor: nothing here wakes on its own")
        yield Footer()


if __name__ == "__main__":
    IdleAnchor().run()
