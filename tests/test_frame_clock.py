"""The shared beat of periodic redraws (ui/frame_clock.py): timers of one period set at different moments fire
together, so a flood's lines and its live numbers are painted in one frame instead of two."""

from __future__ import annotations

import pytest

from specdec_tui.ui.frame_clock import until_next


@pytest.mark.parametrize("now", [100.0, 100.013, 100.05, 100.199, 7.5])
def test_delays_set_at_different_moments_end_on_the_same_beat(now: float) -> None:
    for period in (0.2, 0.05):
        end = now + until_next(period, now)
        assert 0 < end - now <= period + 1e-9
        assert abs(round(end / period) * period - end) < 1e-9  # on the grid: the other timers' beat too


def test_the_journals_beat_falls_on_the_health_views_beat() -> None:
    """A 0.05 s journal flush and a 0.2 s health redraw due in the same 0.2 s end on the same instant."""
    now = 42.131
    health = now + until_next(0.2, now)
    flushes = [now + until_next(0.05, now) + k * 0.05 for k in range(4)]
    assert any(abs(f - health) < 1e-9 for f in flushes)
