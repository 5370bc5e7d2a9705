"""The Tune screen's surface so far: each launch's tok/s per level against its configuration — the draft tree as
steps/topk/draft tokens (and any other tuned flag's value after them), ordered, one series a level (a level that
misses the SLO left out), failed starts marked × at 0 at their configuration."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.app import RenderResult
from textual_plotext import PlotextPlot

from specdec_tui.core.tune_objective import LaunchResult, Point, Slo, meets

TREE = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")
SHORT = {"speculative-num-steps": "steps", "speculative-eagle-topk": "topk", "speculative-num-draft-tokens": "draft"}


def _order(value: str) -> tuple[float, str]:
    try:
        return float(value), value
    except ValueError:
        return float("inf"), value


def axis_flags(results: Sequence[LaunchResult]) -> list[str]:
    """The flags the launches vary, the tree's first (steps, topk, draft), then the others by name."""
    return ordered_flags(k for r in results for k, _ in r.point)


def ordered_flags(names: Iterable[str]) -> list[str]:
    """`names` the tree's first (steps, topk, draft), then the others by name: the chart's and the table's order."""
    named = set(names)
    return [f for f in TREE if f in named] + sorted(named - set(TREE))


def config_label(point: Point, flags: Sequence[str]) -> str:
    """`3/1/4`: the point's values of `flags`, "·" where it does not name one."""
    values = dict(point)
    return "/".join(values.get(f, "·") for f in flags)


def axis_title(flags: Sequence[str]) -> str:
    return "/".join(SHORT.get(f, f) for f in flags) or "configuration"


def tick_indexes(labels: Sequence[str], width: int, top: float) -> list[int]:
    """The configurations to label at `width` columns: every n-th from the first, n as small as lets no two
    labels touch (plotext drops or overprints colliding ones, differently from one frame to the next)."""
    if len(labels) < 2:
        return list(range(len(labels)))
    plot_w = max(1, width - len(f"{top:.1f}") - 3)  # y labels, the axis and the frame
    step = (plot_w - 1) / (len(labels) - 1)
    widest = max(len(label) for label in labels)
    every = max(1, math.ceil((widest + 1) / step) if step > 0 else len(labels))
    return list(range(0, len(labels), every))


def label_ticks(plot: Text, labels: Sequence[str]) -> Text:
    """`plot` with `labels` written under its x ticks (the `┬` of the frame's bottom line), each centred on its
    tick, one left out where it would touch the one before; the plot as it is when the ticks are not all there."""
    lines = plot.split("\n", allow_blank=True)
    frame = next((i for i, line in enumerate(lines) if "└" in line.plain), None)
    if frame is None or frame + 1 >= len(lines):
        return plot
    ticks = [j for j, ch in enumerate(lines[frame].plain) if ch == "┬"]
    if len(ticks) != len(labels):
        return plot
    row = [" "] * len(lines[frame + 1].plain)
    end = -1
    for col, label in zip(ticks, labels, strict=True):
        start = min(max(col - len(label) // 2, 0), len(row) - len(label))
        if start <= end or start < 0:
            continue
        row[start:start + len(label)] = label
        end = start + len(label)
    lines[frame + 1] = Text("".join(row), style=lines[frame].spans[0].style if lines[frame].spans else "")
    return Text("\n").join(lines)


class TuneChart(PlotextPlot):
    """tok/s by configuration (steps/topk/draft …), per level; failures marked."""

    DEFAULT_CSS = "TuneChart { height: 1fr; min-height: 8; width: 1fr; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._labels: list[str] = []
        self._top = 0.0
        self._ticked = (-1, -1)
        self._shown: list[str] = []

    def on_mount(self) -> None:
        self.show([], (), Slo())

    def render(self) -> RenderResult:
        if self._labels and self._ticked != (self.size.width, self.size.height):
            self._ticked = (self.size.width, self.size.height)
            self._shown = [self._labels[i] for i in tick_indexes(self._labels, self.size.width, self._top)]
            # blanks as wide as the labels: plotext keeps their row and ticks; the labels are written below, since
            # plotext's own placement of a label moves by a column from one process to the next
            self.plt.xticks([float(i) for i in tick_indexes(self._labels, self.size.width, self._top)],
                            [" " * len(label) for label in self._shown])
        rendered = super().render()
        return label_ticks(rendered, self._shown) if self._labels and isinstance(rendered, Text) else rendered

    def show(self, results: Sequence[LaunchResult], levels: Sequence[int], slo: Slo) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        flags = axis_flags(results)
        title = axis_title(flags)
        # the axis names the configuration (steps/topk/draft …): the title stays short enough to be drawn
        plt.title("tok/s per level (× failed)" if results else "tok/s per level — waiting for a launch")
        labels = sorted({config_label(r.point, flags) for r in results},
                        key=lambda label: tuple(_order(v) for v in label.split("/")))
        at = {label: i for i, label in enumerate(labels)}
        for c in levels:
            xs, ys = [], []
            for r in results:
                level = r.level(c)
                if not r.failed and level is not None and meets(level, slo):
                    xs.append(at[config_label(r.point, flags)])
                    ys.append(level.tok_s)
            if xs:
                plt.scatter(xs, ys, marker="●", label=f"c={c}")
        failed = [at[config_label(r.point, flags)] for r in results if r.failed]
        if failed:
            plt.scatter(failed, [0.0] * len(failed), marker="×", label="failed")
        self._labels, self._ticked = labels, (-1, -1)  # ticks by the size, at the next render
        self._top = max((lv.tok_s for r in results for lv in r.levels), default=0.0)
        if labels:
            plt.xlabel(title)
        self.refresh()
