"""The web server behind `specdec-tui serve`: textual-serve's, with a door and an orderly stop.

textual-serve lets any page, from any site, open its websocket and so drive the host (edit, push, restart). Here:
  - a token made at each start (like Jupyter's) must be in the page URL `serve` prints, `/?token=T`; the page's
    websocket carries it in its path (`/ws/T`), and no websocket opens without it;
  - a websocket whose Origin is not the served page's own is refused (a page on another site has the wrong one,
    even when it learned the token);
  - at most `max_panels` panels run at once (each is a whole process on this machine); more are refused;
  - a request whose Host header is none of the served names is refused (a DNS-rebinding page's is its own name);
  - a malformed request (a 200 KB header, a control character in one) is one line in the log, not aiohttp's
    traceback with its locals drawn over the operator's terminal, once per request a stranger sends.
When `serve` stops (Ctrl+C, SIGTERM) each open session is cancelled, which textual-serve answers by sending its
panel "quit" and waiting for it to exit, so no panel (nor the demo's simulated server) outlives `serve`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import signal
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from textual_serve.server import Server, to_int

from specdec_tui.core.terminal_codes import terminal_safe

# How long the panels may take to quit (a demo panel stops its simulated server first) when `serve` stops.
SESSION_STOP_TIMEOUT_S = 20.0


def new_token() -> str:
    return secrets.token_urlsafe(24)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, the way a browser writes it in an Origin header (default ports left out)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def allowed_origins(public_url: str, port: int, loopback: bool) -> frozenset[str]:
    """The public URL's origin; on a loopback bind also this port under the loopback names a browser may use."""
    origins = {origin_of(public_url)}
    if loopback:
        origins |= {origin_of(f"http://{name}:{port}") for name in ("127.0.0.1", "localhost", "[::1]")}
    return frozenset(origins)


class MalformedRequestLine(logging.Filter):
    """aiohttp's "Error handling request" for a request it could not parse, as one line without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            words = terminal_safe(str(error.message)).splitlines() or [""]
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.args = (remote, error.code, words[0][:120])
            record.msg, record.exc_info, record.exc_text = "refused a malformed request from %s: %s %s", None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class PanelServer(Server):
    """A textual-serve Server behind a per-start token and an Origin check, with a bound on its panels,
    that stops its panels when it stops."""

    def __init__(self, command: str, *, token: str, origins: Iterable[str], max_panels: int,
                 **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self.token = token
        self.origins = frozenset(origins)
        self.hosts = frozenset(origin.split("://", 1)[1] for origin in self.origins)  # as a Host header names them
        self.max_panels = max_panels
        self._sessions: set[asyncio.Task[Any]] = set()

    @property
    def page_url(self) -> str:
        return f"{self.public_url}/?token={self.token}"

    def _token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.server").addFilter(MalformedRequestLine())

    @web.middleware
    async def known_host_only(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Only requests for a name this is served under (the origins' hosts): a page on another site whose name
        was made to resolve to this address (DNS rebinding) sends its own name."""
        if request.host.lower() not in self.hosts:
            raise web.HTTPMisdirectedRequest(text="specdec-tui serve answers only at the URL it printed\n")
        response: web.StreamResponse = await handler(request)
        return response

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.known_host_only])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws/{token}", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Nothing is said yet: the port is bound after the start-up (aiohttp), and a port in use printed "Open this
        URL" before its error."""

    def say_ready(self, *_aiohttp_words: object) -> None:
        print(f"Serving the panel ({self.command}).\nOpen this URL in a browser (it holds this start's token):\n"
              f"    {self.page_url}\nPress Ctrl+C to stop.", flush=True)

    def serve(self, debug: bool = False) -> None:
        """textual-serve's `serve` (Ctrl+C and SIGTERM stop it in order), saying the URL once the port is bound:
        aiohttp calls `print` after its sites have started, and textual-serve gives it one that says nothing."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=self.say_ready)

    async def handle_index(self, request: web.Request) -> web.Response:
        if not self._token_ok(request.query.get("token")):
            raise web.HTTPForbidden(text="specdec-tui serve: open the URL that `serve` printed (it ends in "
                                         "?token=...); this one has no token or a wrong one\n")
        ws_url = f"{self.public_url}/ws/{self.token}"
        scheme = "wss:" if self.public_url.startswith("https") else "ws:"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": scheme + ws_url.split(":", 1)[1],
            "config": {"static": {"url": f"{self.public_url}/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    def refusal(self, request: web.Request) -> web.HTTPException | None:
        """Why this websocket may not open a panel, as the HTTP answer; None when it may."""
        if not self._token_ok(request.match_info.get("token")):
            return web.HTTPForbidden(text="no panel without this start's token\n")
        if request.headers.get("Origin", "").lower() not in self.origins:
            return web.HTTPForbidden(text="no panel for a page from another origin\n")
        if len(self._sessions) >= self.max_panels:
            return web.HTTPServiceUnavailable(text=f"{self.max_panels} panels are open already (--max-panels)\n")
        return None

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        refused = self.refusal(request)
        if refused is not None:
            raise refused
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
