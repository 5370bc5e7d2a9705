"""One beat for the periodic redraws: delays that end on a shared grid of the monotonic clock.

Under a journal flood the journal pane writes its lines every 0.2 s and each health view redraws its live numbers
every 0.2 s. Each timer started at its own moment, so the two fell into different frames: two full paint passes
(compositor, styles, every dirty line) where one would do, and frames are what keys wait behind (issue 16). A timer
set with `until_next(period)` fires on the same beat as every other one of that period (or of a period that divides
it), so their refreshes land in one frame.
"""

from __future__ import annotations

import time


def until_next(period: float, now: float | None = None) -> float:
    """Seconds from `now` (the monotonic clock Textual's timers use) to the next multiple of `period`; a full
    period when `now` is on one (a redraw is never due at once)."""
    now = time.monotonic() if now is None else now
    rest = period - now % period
    return rest if rest > 1e-6 else period  # on the beat (within float error): the next one
