"""The Fleet tab's feed: a worker that polls every configured host every 2 s while the tab is shown (and at once
when it is opened), and posts the rows. It only posts `FleetRows`; the app renders them. It is handed where its
worker runs and its rows go (`FeedWorkers`), not the app.

The poll itself (every host's reads, its journal's lines parsed, its unit and session read) runs on an event loop of
its own, on a thread (`PollThread`): on the panel's loop, 16 hosts' polls held typed keys behind them (issue 34)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual.message import Message
from textual.worker import Worker

from specdec_tui.core.config import Config
from specdec_tui.ui import messages as m

if TYPE_CHECKING:
    from specdec_tui.loop.fleet import FleetPoller

POLL_EVERY_S = 2.0
T = TypeVar("T")


class FeedWorkers(Protocol):
    """Where the feed's worker runs and its rows go: the app (any Textual `App` is one)."""

    def run_worker(self, work: Coroutine[Any, Any, None], *, group: str, exclusive: bool,
                   exit_on_error: bool) -> Worker[None]: ...
    def post_message(self, message: Message) -> bool: ...


class PollThread:
    """An asyncio loop on a daemon thread, started on first use: what runs there holds the panel's loop only for
    the GIL. Everything the poller opens (connections, clients) is made and closed on this loop."""

    def __init__(self) -> None:
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def run(self, work: Coroutine[object, object, T]) -> T:
        """`work` run on the thread's loop, awaited from the caller's (cancelling the wait cancels the work)."""
        if self._event_loop is None:
            self._event_loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._event_loop.run_forever, name="fleet-poll", daemon=True)
            self._thread.start()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._event_loop))

    def stop(self) -> None:
        event_loop, thread, self._event_loop, self._thread = self._event_loop, self._thread, None, None
        if event_loop is None or thread is None:
            return
        event_loop.call_soon_threadsafe(event_loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            event_loop.close()


class FleetFeed:
    """Owns the fleet poller (its connections live as long as the panel) and the worker that drives it.
    The poller is built when the tab is first shown: most starts never open it (and its import is not cheap)."""

    def __init__(self, workers: FeedWorkers, config: Config, sessions_dir: Path | None) -> None:
        self.workers = workers
        self.config = config
        self.sessions_dir = sessions_dir
        self._poller: FleetPoller | None = None
        self.shown = False
        self._wake = asyncio.Event()
        self._started = False
        self._thread = PollThread()

    @property
    def poller(self) -> FleetPoller:
        if self._poller is None:
            from specdec_tui.loop.fleet import FleetPoller

            self._poller = FleetPoller(self.config, sessions_dir=self.sessions_dir)
        return self._poller

    def show(self, shown: bool) -> None:
        """The Fleet tab was shown (poll now, then every 2 s) or hidden (stop polling)."""
        self.shown = shown
        if shown:
            if not self._started:
                self._started = True
                self.workers.run_worker(self._run(), group="fleet", exclusive=True, exit_on_error=False)
            self._wake.set()

    async def _run(self) -> None:
        from specdec_tui.loop.same_server import SameServer  # with the tab, not on the first frame (hosts.base)

        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.shown:
                try:
                    rows = await self._thread.run(self.poller.poll())
                except SameServer as err:  # two names for one server: said in the tab, no rows
                    self.workers.post_message(m.FleetRows([], refused=str(err)))
                else:
                    self.workers.post_message(m.FleetRows(rows))
                try:
                    await asyncio.wait_for(self._wake.wait(), POLL_EVERY_S)
                    self._wake.clear()
                except TimeoutError:
                    pass

    async def close(self) -> None:
        if self._poller is not None:
            await self._thread.run(self._poller.close())
        self._thread.stop()
