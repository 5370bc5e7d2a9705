"""The web server behind `specdec-tui serve`: textual-serve's, plus an orderly stop.

textual-serve quits a tab's panel when the browser goes away, but when the server itself is stopped (Ctrl+C,
SIGTERM) aiohttp would leave the open sessions running until its shutdown timeout. Here each open session is
cancelled on shutdown, which textual-serve answers by sending its panel "quit" and waiting for it to exit, so no
panel (nor the demo's simulated server a panel started) outlives `serve`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from textual_serve.server import Server

# How long the panels may take to quit (a demo panel stops its simulated server first) when `serve` stops.
SESSION_STOP_TIMEOUT_S = 20.0


class PanelServer(Server):
    """A textual-serve Server that stops its panels when it stops."""

    def __init__(self, command: str, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self._sessions: set[asyncio.Task[Any]] = set()

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self._sessions.discard(task)

    async def on_shutdown(self, app: web.Application) -> None:
        sessions = list(self._sessions)
        for task in sessions:
            task.cancel()
        if sessions:
            await asyncio.wait(sessions, timeout=SESSION_STOP_TIMEOUT_S)
