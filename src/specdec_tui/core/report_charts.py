"""The report's two pictures as SVG, drawn by matplotlib (loaded only when a report is written): tok/s against
concurrency for every trial, and the trade-off of c=1 per-request tok/s against best total tok/s with the Pareto front.

Text stays text (`svg.fonttype = none`) so the report is searchable and small; ids and dates are fixed so the same
session gives the same file."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from specdec_tui.core.compare import shown_label
from specdec_tui.core.session import Session
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.core.trade_off import X_AXIS_NAME, best_axis_name, pareto_front, trade_off_points

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from specdec_tui.core.session import Trial

# Past this many trials a chart names only the newest (tok/s) or the Pareto front (trade-off) and draws the rest
# as one unlabelled collection: a legend or a label per trial of a 10,000-trial session took matplotlib minutes
# (and showed nothing readable).
LABELLED_TRIALS = 12


def _literal(text: str) -> str:
    """A trial's label as matplotlib text that reads as typed: a `$` escaped (two of them began mathtext, where
    "$x^{$" or an unknown macro raised from savefig and ended the report with a traceback, and "$5 to $7" lost its
    dollars), and no control or bidi character (they are the session's, from outside)."""
    return terminal_safe(text).replace("$", r"\$")


@contextmanager
def _figure(title: str) -> Iterator[Figure]:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "specdec-tui", "font.size": 9.0}):
        fig = Figure(figsize=(7.0, 3.8), layout="constrained")
        fig.suptitle(title)
        yield fig


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "specdec-tui"})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline in HTML: no XML declaration or doctype


def tok_s_chart_svg(session: Session) -> str:
    """Total output tok/s against concurrency, one line per trial with results (log-2 concurrency axis)."""
    with _figure("Output tok/s by concurrency") as fig:
        ax = fig.add_subplot()
        measured = [t for t in session.trials if t.levels]
        named = measured[-LABELLED_TRIALS:]
        if len(measured) > len(named):
            _faint_lines(ax, measured[: len(measured) - len(named)])
        for trial in named:
            levels = sorted(trial.levels, key=lambda lv: lv.concurrency)
            ax.plot([lv.concurrency for lv in levels], [lv.output_tok_s for lv in levels], marker="o",
                    label=_literal(f"#{trial.id} {shown_label(trial)}"))
        ax.set_xscale("log", base=2)
        concurrencies = sorted({lv.concurrency for t in session.trials for lv in t.levels})
        if concurrencies:
            ax.set_xticks(concurrencies, [str(c) for c in concurrencies])
        ax.set_xlabel("concurrency")
        ax.set_ylabel("output tok/s")
        ax.grid(True, alpha=0.3)
        if ax.lines:
            # "best" placement tries every spot against every drawn point: fixed once trials are many
            ax.legend(fontsize=8, loc="best" if len(measured) <= LABELLED_TRIALS else "upper left")
        return _svg(fig)


def trade_off_chart_svg(session: Session) -> str:
    """Each trial as a point (c=1 per-request tok/s, best total tok/s); the Pareto front joined and labelled."""
    with _figure("Trade-off: one request vs the whole server") as fig:
        draw_trade_off(fig, session)
        return _svg(fig)


def draw_trade_off(fig: Figure, session: Session) -> None:
    """The trade-off on `fig`. A point's label goes towards the middle of the chart (left of a point in the right
    half), so no label runs past the picture's edge and is cut off."""
    points = trade_off_points(session)
    front = pareto_front(points)
    ax = fig.add_subplot()
    if len(points) > LABELLED_TRIALS:  # one collection for the points off the front, labels on the front only
        rest = [p for p in points if p.trial_id not in front]
        ax.scatter([p.c1_tok_s for p in rest], [p.best_tok_s for p in rest], s=12, color="tab:blue", alpha=0.4,
                   zorder=2, label=f"{len(rest)} trials off the front")
        points = [p for p in points if p.trial_id in front]
    xs = [p.c1_tok_s for p in points]
    middle = (min(xs) + max(xs)) / 2 if xs else 0.0
    for p in points:
        on_front = p.trial_id in front
        ax.scatter([p.c1_tok_s], [p.best_tok_s], s=60 if on_front else 30, marker="D" if on_front else "o",
                   color="tab:orange" if on_front else "tab:blue", zorder=3)
        right = p.c1_tok_s > middle
        ax.annotate(_literal(f"#{p.trial_id} {p.label}"), (p.c1_tok_s, p.best_tok_s), textcoords="offset points",
                    xytext=(-5 if right else 5, 4), ha="right" if right else "left", fontsize=8)
    edge = sorted((p for p in points if p.trial_id in front), key=lambda p: p.c1_tok_s)
    if len(edge) > 1:
        ax.plot([p.c1_tok_s for p in edge], [p.best_tok_s for p in edge], color="tab:orange", linestyle="--",
                label="Pareto front")
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize=8, loc="lower right")
    ax.margins(x=0.12, y=0.15)  # room for the point labels at the edges
    ax.set_xlabel(X_AXIS_NAME)
    ax.set_ylabel(best_axis_name(points) if points else "best tok/s")
    ax.grid(True, alpha=0.3)


def _faint_lines(ax: Axes, trials: list[Trial]) -> None:
    """The older trials as one grey band, from the lowest to the highest tok/s they reached at each concurrency
    (one polygon: a line per trial made matplotlib transform and legend-place 10,000 paths)."""
    reached: dict[int, list[float]] = {}
    for trial in trials:
        for lv in trial.levels:
            reached.setdefault(lv.concurrency, []).append(lv.output_tok_s)
    cs = sorted(reached)
    ax.fill_between(cs, [min(reached[c]) for c in cs], [max(reached[c]) for c in cs], color="0.6", alpha=0.3,
                    linewidth=0, label=f"{len(trials)} earlier trials (their range)")
