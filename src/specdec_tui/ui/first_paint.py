"""Run work after the first frame has really reached the terminal — the one place that reads Textual's start batch.

Textual starts an app inside a batch: `App._process_messages` wraps the app's compose, mount and ready in
`batch_update()`, and while a batch is open the app drops every frame it would display, and a screen runs its
after-refresh callbacks without painting (`Screen._on_idle`, `_on_timer_update`, `_refresh_layout`). The main
screen is pushed from `App.on_mount`, inside that batch, so its first after-refresh callback comes before
anything is on the terminal, and whatever it mounts delays the first frame (issue 16, cold start).

`after_painted` runs the work as soon as a frame is known to be on the terminal: the first layout Textual
publishes (its public `screen_layout_refresh_signal`) with no batch open was written before the signal, so the
work starts right there — before, it waited for a forced repaint of the unchanged screen and a timer tick after
it (~40 ms and two whole-screen frames on the demo's start, between its first frame and the Config form: issue 34).
When no such layout comes, it waits for the batch to close, forces a repaint, and runs the work after THAT paint.
Whichever comes first runs the work, once.
Textual private: the number of open batches (`textual_compat.open_batches`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.screen import Screen

from specdec_tui.ui.textual_compat import open_batches

Work = Callable[[], Awaitable[None] | None]


def _batch_open(screen: Screen[Any]) -> bool:
    """True while the app holds its frames back (the start batch, or another `batch_update`)."""
    return open_batches(screen.app) > 0


class _Once:
    """`work`, run by whichever of the two ways to know a frame was written comes first; the other finds it done."""

    def __init__(self, work: Work) -> None:
        self.work: Work | None = work

    async def run(self) -> None:
        work, self.work = self.work, None
        if work is not None:
            result = work()
            if result is not None:
                await result


def after_painted(screen: Screen[Any], work: Work) -> None:
    """Run `work` once a frame of `screen` has been written (call it from the screen's mount): at the first layout
    of `screen` written with no batch open (its `screen_layout_refresh_signal`, published right after the frame went
    out), or once no batch is open (the app reads its own message queue only after the start batch has closed), a
    forced repaint, and `work` after that paint — whichever comes first. The refresh that led here may have been
    painted or dropped (it depends on which task got there first), so that frame is forced: one more paint of an
    unchanged screen."""
    once = _Once(work)

    def laid_out(_: Screen[Any]) -> None:
        # immediate: called inside the layout refresh, where "no batch open" means its frame was just written
        if once.work is not None and not _batch_open(screen):
            screen.call_next(once.run)

    screen.screen_layout_refresh_signal.subscribe(screen, laid_out, immediate=True)
    screen.call_after_refresh(_after_batch, screen, once)


def _after_batch(screen: Screen[Any], once: _Once) -> None:
    if once.work is None:
        return  # a written layout came first
    if _batch_open(screen):
        screen.app.call_later(_after_batch, screen, once)
        return
    screen.refresh()  # a frame drawn inside the batch was dropped, and nothing is dirty any more
    screen.call_after_refresh(once.run)
