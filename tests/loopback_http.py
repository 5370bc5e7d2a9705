"""A real aiohttp server on loopback with the routes a test gives (servers that misbehave on purpose)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def serving(get: Mapping[str, Handler] | None = None, post: Mapping[str, Handler] | None = None) -> AsyncIterator[str]:
    """`async with serving(get={"/health": handler}) as url:` a server on 127.0.0.1 (a free port) answering those paths."""
    app = web.Application()
    for path, handler in (get or {}).items():
        app.router.add_get(path, handler)
    for path, handler in (post or {}).items():
        app.router.add_post(path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
