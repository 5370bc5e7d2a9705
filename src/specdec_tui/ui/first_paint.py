"""Run work after the first frame has really reached the terminal — the one place that reads Textual's start batch.

Textual starts an app inside a batch: `App._process_messages` wraps the app's compose, mount and ready in
`batch_update()`, and while a batch is open the app drops every frame it would display, and a screen runs its
after-refresh callbacks without painting (`Screen._on_idle`, `_on_timer_update`, `_refresh_layout`). The main
screen is pushed from `App.on_mount`, inside that batch, so its first after-refresh callback comes before
anything is on the terminal, and whatever it mounts delays the first frame (issue 16, cold start).

`after_painted` waits for the batch to close, forces a repaint, and runs the work after THAT paint.
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


def after_painted(screen: Screen[Any], work: Work) -> None:
    """Run `work` once a frame of `screen` has been written: once no batch is open (the app reads its own message
    queue only after the start batch has closed), a forced repaint, and `work` after that paint. The refresh
    that led here may have been painted or dropped (it depends on which task got there first), so the frame is
    always forced: one more paint of an unchanged screen costs next to nothing."""
    if _batch_open(screen):
        screen.app.call_later(after_painted, screen, work)
        return
    screen.refresh()  # a frame drawn inside the batch was dropped, and nothing is dirty any more
    screen.call_after_refresh(work)
