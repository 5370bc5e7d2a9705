"""The Trials tab's trade-off view: each trial as a point — c=1 per-request tok/s (what one user gets) against best
total tok/s (what the server delivers) — with the Pareto front joined and marked, and the trial under the cursor
highlighted. More speculative steps move a point right and, past a point, down: the front is where to choose.

Public API: TradeOffChart(id=...); .set_points(points, front); .set_source(compute); .select(trial_id); .points,
.front, .selected.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import RenderResult
from textual_plotext import PlotextPlot

from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.core.trade_off import X_AXIS_NAME, TradeOffPoint, best_axis_name
from specdec_tui.ui.widgets.chart_ticks import PLOT_FRAME_ROWS, nice_ticks, tick_labels

PointSource = Callable[[], tuple[list[TradeOffPoint], set[int]]]  # the points and the front's trial ids
FRONT_COLOR = "orange"
OTHER_COLOR = "gray"
SELECTED_COLOR = "cyan"


class TradeOffChart(PlotextPlot):
    """c=1 per-request tok/s (x) against best total tok/s (y); see the module doc."""

    DEFAULT_CSS = """
    TradeOffChart { height: 1fr; min-height: 8; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.points: list[TradeOffPoint] = []
        self.front: set[int] = set()
        self.selected: int | None = None
        self._ticked_height = -1
        self._y_range = (0.0, 1.0)
        self._source: PointSource | None = None  # the points to compute once the chart is on screen (set_source)
        self._drawn_width = -1  # the width the label was placed for (on_resize)

    def on_mount(self) -> None:
        self._draw()

    def set_source(self, compute: PointSource) -> None:
        """The points `compute()` returns, computed now if the chart is on screen, else once it is shown (the newest
        source only). A 1,000-trial session's points cost ~30 ms to make, and a sweep changes the session on every
        level: made while another tab was shown, they held the panel's keys for nothing (issue 34)."""
        self._source = compute
        if self.is_on_screen:
            self._compute()

    def on_show(self) -> None:
        self._compute()

    def _compute(self) -> None:
        compute, self._source = self._source, None
        if compute is not None:
            self.set_points(*compute())

    def render(self) -> RenderResult:
        """The y ticks depend on the height: set here, where the size is known (`chart_ticks`)."""
        if self._ticked_height != self.size.height and self.points:
            self._ticked_height = self.size.height
            ticks = nice_ticks(*self._y_range, self.size.height - PLOT_FRAME_ROWS)
            if ticks:
                self.plt.yticks(ticks, tick_labels(ticks))
        return super().render()

    def on_resize(self) -> None:
        """The label's offset from its point is one cell of the chart's width: drawn while the tab was hidden
        (no width yet), it stood ten cells off until the next draw. Only then: the Trials tab's every show sends
        a Resize of the width the chart was drawn at, and redrawing it cost a switch to the tab ~5 ms (a plot
        rebuilt and every row of the chart rendered again)."""
        if self.selected is not None and self.size.width != self._drawn_width:
            self._draw()

    def set_points(self, points: list[TradeOffPoint], front: set[int]) -> None:
        self.points, self.front = list(points), set(front)
        self._draw()

    def select(self, trial_id: int | None) -> None:
        if trial_id != self.selected:
            self.selected = trial_id
            self._draw()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.xlabel(X_AXIS_NAME)
        plt.ylabel(best_axis_name(self.points) if self.points else "best tok/s")
        if not self.points:
            plt.title("trade-off — no finished trial with a c=1 level and a level within its TTFT limit yet")
            self.refresh()
            return
        plt.title("trade-off: one request vs the whole server (◆ Pareto front)")
        edge = sorted((p for p in self.points if p.trial_id in self.front), key=lambda p: p.c1_tok_s)
        if len(edge) > 1:
            plt.plot([p.c1_tok_s for p in edge], [p.best_tok_s for p in edge], color=FRONT_COLOR, marker="braille")
        others = [p for p in self.points if p.trial_id not in self.front]
        if others:
            plt.scatter([p.c1_tok_s for p in others], [p.best_tok_s for p in others], marker="•", color=OTHER_COLOR)
        if edge:
            plt.scatter([p.c1_tok_s for p in edge], [p.best_tok_s for p in edge], marker="◆", color=FRONT_COLOR)
        xs, ys = [p.c1_tok_s for p in self.points], [p.best_tok_s for p in self.points]
        x_range = axis_range(xs)
        y_range = axis_range(ys)
        # one trial (or all alike): plotext's axis would span the label alone, the point on its edge
        if x_range != (min(xs), max(xs)):
            plt.xlim(*x_range)
        plt.ylim(*y_range)  # the ticks (render) are placed within it
        self._y_range, self._ticked_height = y_range, -1
        chosen = next((p for p in self.points if p.trial_id == self.selected), None)
        self._drawn_width = self.size.width
        if chosen is not None:
            right_half = chosen.c1_tok_s > sum(x_range) / 2  # label towards the middle, never off the edge
            # one character cell beside the point, in data units, so the label never covers its marker
            cell = (x_range[1] - x_range[0]) / max(self.size.width - 12, 10)
            plt.scatter([chosen.c1_tok_s], [chosen.best_tok_s], marker="●", color=SELECTED_COLOR)
            plt.text(terminal_safe(f"#{chosen.trial_id} {chosen.label}"), chosen.c1_tok_s + (-cell if right_half else cell) * 1.5,
                     chosen.best_tok_s, color=SELECTED_COLOR, alignment="right" if right_half else "left")
        self.refresh()


def axis_range(values: list[float]) -> tuple[float, float]:
    """The values' range; when they are all one value, ±10 % around it (±1 at zero), the point in the middle."""
    low, high = min(values), max(values)
    if low < high:
        return low, high
    half = abs(low) * 0.1 or 1.0
    return low - half, low + half
