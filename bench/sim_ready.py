"""What the benchmarks that start the simulator share: a free loopback port, and a wait until /health answers 200."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from specdec_tui.hosts.local.workspace import free_port

__all__ = ["free_port", "wait_healthy"]


async def wait_healthy(session: aiohttp.ClientSession, url: str, timeout_s: float = 120.0, every_s: float = 0.1) -> None:
    """Return once `url`/health answers 200; a server that never does ends the benchmark in words."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            async with session.get(url + "/health") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(every_s)
    raise SystemExit(f"the simulator at {url} was not healthy within {timeout_s:.0f} s")
