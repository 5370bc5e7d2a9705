"""Aggregate tok/s against concurrency, one line per trial: where a flag change wins and where it loses.

More speculative steps help a single request and can hurt at high concurrency (less KV room), so
the curves crossing is the thing to see. Concurrency is plotted on a log2 axis (1, 4, 16, 32, 64 spread
evenly enough) with the real levels as tick labels.

Public API (for the app shell):
    TokChart(id=...)
    .set_trials(trials: list[tuple[str, list[LevelResult]]])   # (label e.g. "steps=3", levels)
    .series: list[tuple[str, list[tuple[int, float]]]]          # what is plotted: (label, [(c, tok/s)])
"""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

from specdec_tui.core.results import LevelResult

MAX_LINES = 8  # more curves than this is unreadable in a terminal: keep the newest


class TokChart(PlotextPlot):
    """tok/s vs concurrency (log2 x), one curve per trial (API in module doc)."""

    DEFAULT_CSS = """
    TokChart { height: 1fr; min-height: 10; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[tuple[str, list[tuple[int, float]]]] = []

    def on_mount(self) -> None:
        self._draw()

    def set_trials(self, trials: list[tuple[str, list[LevelResult]]]) -> None:
        self.series = [
            (label, sorted((lv.concurrency, lv.output_tok_s) for lv in levels if lv.concurrency > 0))
            for label, levels in trials[-MAX_LINES:]
            if levels
        ]
        self._draw()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("tok/s vs concurrency")
        plt.xlabel("concurrency")
        concurrencies = sorted({c for _, points in self.series for c, _ in points})
        if not concurrencies:
            plt.title("tok/s vs concurrency — no benchmark yet")
        for label, points in self.series:
            xs = [math.log2(c) for c, _ in points]
            ys = [tok_s for _, tok_s in points]
            plt.plot(xs, ys, label=label, marker="braille")
        if concurrencies:
            plt.xticks([math.log2(c) for c in concurrencies], [str(c) for c in concurrencies])
        self.refresh()
