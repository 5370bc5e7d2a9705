"""The Tune screen's surface so far: each launch's tok/s per level against its configuration — the draft tree as
steps/topk/draft tokens (and any other tuned flag's value after them), ordered, one series a level (a level that
misses the SLO left out), failed starts marked × at 0 at their configuration."""

from __future__ import annotations

from collections.abc import Sequence

from textual_plotext import PlotextPlot

from specdec_tui.core.tune_objective import LaunchResult, Point, Slo, meets

TREE = ("speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens")
SHORT = {"speculative-num-steps": "steps", "speculative-eagle-topk": "topk", "speculative-num-draft-tokens": "draft"}
MAX_TICKS = 12  # more labels than this overprint at the screen's widths: every n-th is kept


def _order(value: str) -> tuple[float, str]:
    try:
        return float(value), value
    except ValueError:
        return float("inf"), value


def axis_flags(results: Sequence[LaunchResult]) -> list[str]:
    """The flags the launches vary, the tree's first (steps, topk, draft), then the others by name."""
    named = {k for r in results for k, _ in r.point}
    return [f for f in TREE if f in named] + sorted(named - set(TREE))


def config_label(point: Point, flags: Sequence[str]) -> str:
    """`3/1/4`: the point's values of `flags`, "·" where it does not name one."""
    values = dict(point)
    return "/".join(values.get(f, "·") for f in flags)


def axis_title(flags: Sequence[str]) -> str:
    return "/".join(SHORT.get(f, f) for f in flags) or "configuration"


class TuneChart(PlotextPlot):
    """tok/s by configuration (steps/topk/draft …), per level; failures marked."""

    DEFAULT_CSS = "TuneChart { height: 1fr; min-height: 8; width: 1fr; }"

    def on_mount(self) -> None:
        self.show([], (), Slo())

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
        if labels:
            every = max(1, -(-len(labels) // MAX_TICKS))
            shown = list(range(0, len(labels), every))
            plt.xticks([float(i) for i in shown], [labels[i] for i in shown])
            plt.xlabel(title)
        self.refresh()
