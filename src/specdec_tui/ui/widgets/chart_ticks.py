"""Y-axis ticks for the terminal charts: round values, evenly spaced, as many as the rows hold.

plotext picks its own y ticks and, on a short chart (80×24), leaves some out where two would share a row, so
the axis read 2340.0, 2187.9, 1883.8 … with gaps of two sizes. Here a tick gets two rows at least, at round steps
(1, 2, 2.5, 5 × 10ⁿ), labelled without noise digits.
"""

from __future__ import annotations

import math

PLOT_FRAME_ROWS = 5  # title, top and bottom frame, x tick labels, x axis label: the rest are the plot's rows


def nice_ticks(low: float, high: float, rows: int) -> list[float]:
    """Round, evenly spaced values within [low, high] for a plot `rows` tall: the finest round step that gives
    no more ticks than one per two rows (and two at least)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low or rows < 2:
        return []
    most = max(2, min(6, rows // 2 + 1))
    magnitude = 10 ** math.floor(math.log10((high - low) / (most - 1)))
    for step in (s * magnitude * m for m in (0.1, 1, 10) for s in (1, 2, 2.5, 5)):
        ticks = _ticks(low, high, step)
        if 2 <= len(ticks) <= most:
            return ticks
    return _ticks(low, high, 10 * magnitude * 10) or [low, high]


def _ticks(low: float, high: float, step: float) -> list[float]:
    ticks = []
    value = math.ceil(low / step - 1e-9) * step
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def tick_labels(ticks: list[float]) -> list[str]:
    """"1,500" or "2.5": as many decimals as the step needs, thousands separated."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    return [f"{t:,.{decimals}f}" for t in ticks]
