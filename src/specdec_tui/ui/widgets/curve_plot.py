"""One sweep curve (the sweep screen's two: low-c tok/s going up, max_running_requests going down)."""

from __future__ import annotations

from textual_plotext import PlotextPlot


class CurvePlot(PlotextPlot):
    """One sweep curve: a figure per swept value."""

    DEFAULT_CSS = "CurvePlot { height: 1fr; min-height: 8; width: 1fr; }"

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title = title
        self.points: list[tuple[str, float]] = []

    def on_mount(self) -> None:
        self.set_points([])

    def set_points(self, points: list[tuple[str, float]]) -> None:
        self.points = points
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        # the empty state on a line of its own: "title — waiting for the first value" was wider than a chart at
        # 80×24, and plotext drops a title that does not fit (an empty box until the first value)
        plt.title(self.title)
        plt.xlabel("" if points else "waiting for the first value")
        if points:
            xs = list(range(len(points)))
            plt.plot(xs, [y for _, y in points], marker="braille")
            plt.scatter(xs, [y for _, y in points], marker="●")
            plt.xticks([float(x) for x in xs], [label for label, _ in points])
        self.refresh()
