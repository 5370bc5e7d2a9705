"""The Tune screen's surface so far: each launch's tok/s per level against its speculative steps (one series a
level, a level that misses the SLO left out), failed starts marked × at 0."""

from __future__ import annotations

from collections.abc import Sequence

from textual_plotext import PlotextPlot

from specdec_tui.core.tune_objective import LaunchResult, Slo, meets

STEPS = "speculative-num-steps"


def _steps(result: LaunchResult) -> float:
    value = dict(result.point).get(STEPS, "0")
    return float(value) if value.replace(".", "", 1).isdigit() else 0.0


class TuneChart(PlotextPlot):
    """tok/s by steps, per level; failures marked."""

    DEFAULT_CSS = "TuneChart { height: 1fr; min-height: 8; width: 1fr; }"

    def on_mount(self) -> None:
        self.show([], (), Slo())

    def show(self, results: Sequence[LaunchResult], levels: Sequence[int], slo: Slo) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("tok/s by steps, per level (× failed)" if results else "tok/s by steps — waiting for a launch")
        for c in levels:
            xs, ys = [], []
            for r in results:
                level = r.level(c)
                if not r.failed and level is not None and meets(level, slo):
                    xs.append(_steps(r))
                    ys.append(level.tok_s)
            if xs:
                plt.scatter(xs, ys, marker="●", label=f"c={c}")
        failed = [_steps(r) for r in results if r.failed]
        if failed:
            plt.scatter(failed, [0.0] * len(failed), marker="×", label="failed")
        self.refresh()
