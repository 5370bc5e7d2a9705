"""Aggregate tok/s against concurrency (or against the request rate, for open-loop levels), one line per trial:
where a flag change wins and where it loses.

More speculative steps help a single request and can hurt at high concurrency (less KV room), so
the curves crossing is the thing to see. Concurrency is plotted on a log2 axis (1, 4, 16, 32, 64 spread
evenly enough) with the real levels as tick labels.

Public API (for the app shell):
    TokChart(id=...)
    .set_trials(trials: list[tuple[str, list[LevelResult]]])   # (label e.g. "steps=3", levels)
    .series: list[tuple[str, list[tuple[float, float]]]]        # what is plotted: (label, [(c or rate, tok/s)])
    .by_rate: bool                                               # x is the request rate (open-loop levels)
    .starting: str | None                                        # a trial given with no levels yet (its run starts)
"""

from __future__ import annotations

import math

from textual.app import RenderResult
from textual_plotext import PlotextPlot

from specdec_tui.core.results import LevelResult
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui.widgets.chart_ticks import PLOT_FRAME_ROWS, nice_ticks, tick_labels

MAX_LINES = 8  # more curves than this is unreadable in a terminal: keep the newest


class TokChart(PlotextPlot):
    """tok/s vs concurrency (log2 x), one curve per trial (API in module doc)."""

    DEFAULT_CSS = """
    TokChart { height: 1fr; min-height: 10; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[tuple[str, list[tuple[float, float]]]] = []  # (label, [(x, tok/s)]): x a concurrency or a rate
        self.by_rate = False  # x is the request rate (the newest trial ran open-loop levels), else the concurrency
        self.left_out = 0  # trials of the other kind, not drawn on this axis
        self.starting: str | None = None  # a run's label while its first level is on its way
        self._ticked_width = -1
        self._ticked_height = -1
        self._drawn = False  # `_draw` has run: the figure holds `series`

    def on_mount(self) -> None:
        self._draw()

    def set_trials(self, trials: list[tuple[str, list[LevelResult]]]) -> None:
        # a level where every request failed measured nothing: no point, and no line across it; an open-loop level
        # (concurrency 0, issue 33) has no place on a concurrency axis, and a trial with only such levels draws no
        # line (plotext fails on an empty labelled one)
        # open-loop levels (issue 33) are drawn against their rate, when the newest measured trial ran at a rate; the
        # axis is one or the other: curves of the other kind are left out (the title says so)
        # the chart is drawn again only when what it plots changed: the panel asks at every change of the session
        # and of a benchmark (a status, a push, a level of another trial), ~2 ms of plotext each, in a sweep twice a
        # level (issue 34)
        # a label is the session's (outside text): plotext's output is read back as ANSI, so its escape codes
        # coloured the legend and an OSC's text ("0;PWNED") showed
        trials = [(terminal_safe(label), levels) for label, levels in trials]
        newest = next((levels for _, levels in reversed(trials) if levels), [])
        by_rate = bool(newest) and all(lv.rate is not None for lv in newest)
        points = [(label, sorted((_x(lv), lv.output_tok_s if lv.measured else math.nan) for lv in levels
                                 if (lv.rate is not None) == by_rate and (by_rate or lv.concurrency > 0)))
                  for label, levels in trials if levels]
        left_out = sum(1 for _, pts in points if not pts)
        series = [(label, pts) for label, pts in points if pts][-MAX_LINES:]
        starting = next((label for label, levels in reversed(trials) if not levels), None)
        if self._drawn and (by_rate, left_out, series, starting) == (self.by_rate, self.left_out, self.series,
                                                                     self.starting):
            return
        self.by_rate, self.left_out, self.series, self.starting = by_rate, left_out, series, starting
        self._draw()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        axis = "request rate (req/s)" if self.by_rate else "concurrency"
        other = f" ({self.left_out} trial(s) at a {'concurrency' if self.by_rate else 'rate'} not drawn)" if self.left_out else ""
        plt.title(f"tok/s vs {axis}{other}")
        plt.xlabel(axis)
        concurrencies = sorted({c for _, points in self.series for c, _ in points})
        if self.starting is not None:  # a run whose first level is on its way: not "no benchmark"
            plt.title(f"tok/s vs {axis} — {self.starting}: the first level is running")
        elif not concurrencies:
            plt.title(f"tok/s vs {axis} — no benchmark yet")
        for label, points in self.series:
            for i, run in enumerate(_measured_runs(points)):  # one line per run of measured levels
                plt.plot([math.log2(c) for c, _ in run], [tok_s for _, tok_s in run], label=label if i == 0 else None,
                         marker="braille")
        self._ticked_width = -1  # the ticks depend on the size: set at the next render
        self._drawn = True
        self.refresh()

    def render(self) -> RenderResult:
        if self._ticked_width != self.size.width or self._ticked_height != self.size.height:
            self._ticked_width, self._ticked_height = self.size.width, self.size.height
            ticks = self.tick_levels(self.size.width)
            if ticks:
                self.plt.xticks([math.log2(c) for c in ticks], [_label(c) for c in ticks])
            ys = [tok_s for _, points in self.series for _, tok_s in points if not math.isnan(tok_s)]
            y_ticks = nice_ticks(min(ys), max(ys), self.size.height - PLOT_FRAME_ROWS) if ys else []
            if y_ticks:  # round values, a row apart at least (plotext's own skipped some at 80×24)
                self.plt.yticks(y_ticks, tick_labels(y_ticks))
        return super().render()

    def tick_levels(self, width: int) -> list[float]:
        """The levels to label on the x axis at `width` columns: as many as fit whole, the highest always.

        plotext drops or overprints labels that collide (at 80 columns `64` showed as `4`), so labels that
        would touch a neighbour are left out here, from the right: the top level is the one a reader looks for."""
        levels = sorted({c for _, points in self.series for c, _ in points})
        if len(levels) < 2:
            return levels
        top = max((tok_s for _, points in self.series for _, tok_s in points if not math.isnan(tok_s)), default=0.0)
        plot_w = max(1, width - len(f"{top:.1f}") - 3)  # y labels, the axis and the frame
        span = math.log2(levels[-1]) - math.log2(levels[0]) or 1.0
        kept = [levels[-1]]
        for level in reversed(levels[:-1]):
            col = (math.log2(level) - math.log2(levels[0])) / span * (plot_w - 1)
            right = (math.log2(kept[-1]) - math.log2(levels[0])) / span * (plot_w - 1)
            if right - col >= (len(_label(level)) + len(_label(kept[-1]))) / 2 + 1:
                kept.append(level)
        return sorted(kept)


def _x(level: LevelResult) -> float:
    """Where a level sits on the x axis: its rate (open loop), else its concurrency."""
    return level.rate if level.rate is not None else level.concurrency


def _label(x: float) -> str:
    """A tick's label: "16" for a concurrency, "12.5" for a rate."""
    return f"{x:.4g}"


def _measured_runs(points: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """The points split where a level measured nothing (NaN), so no line is drawn across it."""
    runs: list[list[tuple[float, float]]] = [[]]
    for c, tok_s in points:
        if math.isnan(tok_s):
            runs.append([])
        else:
            runs[-1].append((c, tok_s))
    return [run for run in runs if run]
