"""The benchmark table's columns: their keys and labels, which a narrow table keeps first, and the row of each
stored level (closed-loop by concurrency, open-loop by rate). No widget here: `bench_table` lays them out."""

from __future__ import annotations

from collections.abc import Sequence

from specdec_tui.core.results import SERVER_AVG_LABEL, LevelResult

# (key, label) in display order
COLUMNS: tuple[tuple[str, str], ...] = (
    ("c", "C"),
    ("tok_s", "tok/s"),
    ("good_req", "good/s"),  # goodput (issue 33): requests/s and tok/s of the requests that met the SLO
    ("good_tok", "good tok/s"),
    ("prev", "prev"),
    ("delta", "Δ"),
    ("progress", "progress"),
    ("ttft_p50", "TTFT p50"),
    ("ttft_p99", "TTFT p99"),
    ("itl_p50", "ITL p50"),
    ("tpot_p50", "TPOT p50"),
    ("per_req", "req tok/s"),
    ("accept", "accept s/c"),
    ("srv_avg", SERVER_AVG_LABEL),
    ("errors", "err"),
)
# The "accept s/c" column's two figures, said under the table once a run is done (a new user read "1.64/1.61" with
# nothing telling which was which; the marks after them are core.results.accept_source_legend's)
ACCEPT_PAIR_LEGEND = "accept s/c = the server's / the client's (tokens per stream chunk)"
# What a narrow table keeps, first to last: the figures that answer "faster, and at what latency cost?"
PRIORITY: tuple[str, ...] = (
    "c", "tok_s", "delta", "progress", "good_req", "good_tok", "ttft_p99", "itl_p50", "errors", "accept", "tpot_p50",
    "prev", "srv_avg", "ttft_p50", "per_req",
)
GOODPUT = frozenset({"good_req", "good_tok"})  # shown only when the profile has an SLO (`slo=` or a level's goodput)
CELL_PADDING = 2  # DataTable's cell_padding (1) on each side


def columns_for(width: int, widths: dict[str, int], hidden: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The columns that fit `width`, taken in PRIORITY order (one that does not fit is skipped, a
    narrower one after it may still fit), returned in display order; `hidden` ones never."""
    chosen: set[str] = set()
    used = 0
    for key in PRIORITY:
        if key in hidden:
            continue
        need = widths[key] + CELL_PADDING
        if used + need <= width or not chosen:
            chosen.add(key)
            used += need
    return tuple(key for key, _ in COLUMNS if key in chosen)


def row_keys(levels: Sequence[LevelResult]) -> list[tuple[int, LevelResult]]:
    """Each stored level's row: closed-loop ones by concurrency, in order; open-loop ones after them, by rate,
    keyed -1, -2, … (a rate search's trial has several, all of concurrency 0)."""
    closed = sorted((lv for lv in levels if lv.rate is None), key=lambda lv: lv.concurrency)
    opened = sorted((lv for lv in levels if lv.rate is not None), key=lambda lv: lv.rate or 0.0)
    return [(lv.concurrency, lv) for lv in closed] + [(-(i + 1), lv) for i, lv in enumerate(opened)]
