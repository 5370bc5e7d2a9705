"""The benchmark table: one row per concurrency, filling live while a level runs, compared to the last trial.

The operator's question after each push is "did it get faster, and where?", so every row shows the
previous trial's aggregate tok/s beside the new one with a coloured change, and the caveats that make a
number untrustworthy (errors, estimated tokens, inflated acceptance) are listed under the table.

Public API (for the app shell):
    BenchTable(id=...)
    .start_run(concurrencies: Sequence[int], previous: list[LevelResult] | None = None)   # rows pending "…"
    .apply_event(event: BenchEvent)      # LevelStarted / LevelProgress / LevelDone / RunDone from bench.events,
                                         # each type its own method (singledispatch: no isinstance ladder)
    (named apply_event, not on_event: Textual's MessagePump.on_event is its own event dispatcher, and no
    attribute shadows the pump's own state: issue 34's `_running`)
    .show_results(levels: list[LevelResult], previous: list[LevelResult] | None = None)  # a finished trial
    .results: dict[int, LevelResult]  # levels finished so far, by concurrency
    .cell_text(concurrency, column) -> str   # plain text of a cell (column keys: COLUMNS), shown or not
    .visible_columns: tuple[str, ...]        # the columns that fit the widget's width (PRIORITY order decides)
    .warnings: list[str], .status: str
    start_run and show_results take `slo=` (the profile's targets: goodput columns, issue 33; a stored level that
    measured goodput shows them too) and `limit=LatencyLimit(max_running_requests, ttft_limit_s)`: levels above
    the server's max running requests are marked as queueing, and the summary names the best level within
    the TTFT limit (core.latency), not only the peak.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import singledispatchmethod

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from specdec_tui.bench.events import (
    BenchEvent,
    LevelDone,
    LevelProgress,
    LevelStarted,
    RunDone,
)
from specdec_tui.core.compare import delta_pct
from specdec_tui.core.latency import LatencyLimit, pick
from specdec_tui.core.number_format import MISSING, fmt_delta, fmt_int, fmt_ms, fmt_num
from specdec_tui.core.progress import duration_words, eta_words
from specdec_tui.core.results import LevelResult, accept_source_legend
from specdec_tui.core.status_tone import Tone, delta_tone
from specdec_tui.ui.cell_style import foreground_style
from specdec_tui.ui.text_bars import line_bar
from specdec_tui.ui.widgets.alike_rows import AlikeRows
from specdec_tui.ui.widgets.bench_columns import ACCEPT_PAIR_LEGEND, COLUMNS, GOODPUT, columns_for, row_keys
from specdec_tui.ui.widgets.focus_kept_table import FocusKeptTable

PENDING = "…"
BAR_WIDTH = 8
OPEN_LOOP = "open"  # the row of an open-loop level before it ends (then its rate, "12/s")


@dataclass(slots=True)
class _Running:
    """What we know about the level in flight (progress events carry no plan, so keep it here)."""

    planned: int
    duration_s: float | None
    started: float


class BenchTable(Vertical, AlikeRows):
    """Benchmark rows per concurrency with live progress and deltas vs the previous trial (API in module doc)."""

    COMPONENT_CLASSES = {"bench--better", "bench--worse", "bench--pending", "bench--running", "bench--done", "bench--error",
                         "bench--queued"}
    DEFAULT_CSS = """
    BenchTable {
        height: auto;
        max-height: 100%;
        & > .bench--better { color: $text-success; text-style: bold; }
        & > .bench--worse { color: $text-error; text-style: bold; }
        & > .bench--pending { color: $text-muted; }
        & > .bench--running { color: $text-accent; }
        & > .bench--done { color: $text-success; }
        & > .bench--error { color: $text-error; }
        & > .bench--queued { color: $text-warning; }
        #bench-data { height: auto; max-height: 12; }
        #bench-status { height: auto; padding: 0 1; color: $text-muted; }
        #bench-warnings { height: auto; padding: 0 1; color: $text-warning; }
        #bench-warnings.-empty { display: none; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id=id, classes=classes)
        self.clock = clock  # how long a level has run, for its time left (a fixed one in snapshots)
        self.results: dict[int, LevelResult] = {}
        self.warnings: list[str] = []  # "c=1,4: note": one line per distinct note, however many levels share it
        self._warnings_shown = ""  # what the warnings line shows (the widget is composed empty)
        self._notes: dict[str, list[int]] = {}
        self.status = "No benchmark yet — press b to run one."
        self._previous: dict[int, LevelResult] = {}
        self._levels_running: dict[int, _Running] = {}
        self._limit = LatencyLimit()
        self._cells: dict[int, dict[str, Text]] = {}  # every column of every row, shown or not
        self._slo: tuple[str, ...] = ()  # the profile's SLO targets: goodput columns while there are some
        self.visible_columns: tuple[str, ...] = tuple(key for key, _ in COLUMNS if key not in GOODPUT)

    def compose(self) -> ComposeResult:
        table: DataTable[Text | str] = FocusKeptTable(id="bench-data")
        for key, label in COLUMNS:
            if key in self.visible_columns:
                table.add_column(label, key=key)
        yield table
        # Words, not markup: the status names a stored trial by its label and says a server's error, the warnings
        # quote what the server and the run said; "[link=javascript:x]" in a label raised MarkupError at open.
        yield Static(self.status, id="bench-status", markup=False)
        yield Static("", id="bench-warnings", classes="-empty", markup=False)

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#bench-data", DataTable)

    # -- public API ------------------------------------------------------------------------------

    def start_run(self, concurrencies: Sequence[int], previous: list[LevelResult] | None = None, *,
                  limit: LatencyLimit | None = None, slo: Sequence[str] = ()) -> None:
        """Reset to one pending row per concurrency of the profile (`slo`: its targets, for the goodput columns)."""
        self._reset(previous, limit, slo)
        for concurrency in concurrencies:
            self._add_row(concurrency)
        self._set_status(f"Running {len(concurrencies)} levels…")

    def show_results(self, levels: list[LevelResult], previous: list[LevelResult] | None = None, *,
                     limit: LatencyLimit | None = None, of: str = "", slo: Sequence[str] = ()) -> None:
        """Show a finished (or stored) trial's levels; `of` names the trial (a stored one, not the run just made)."""
        self._reset(previous, limit, slo)
        for key, level in row_keys(levels):
            self._add_row(key)
            self._fill_done(level, key)
        count = f"{len(levels)} level{'s' if len(levels) != 1 else ''}."
        status = f"{count} {pick(levels, self._limit).summary()}" if levels else count
        self._set_status(f"{of}: {status}" if of else status)

    @singledispatchmethod
    def apply_event(self, event: BenchEvent) -> None:
        """Apply one engine event to the table: each event type has its own method, registered below."""
        raise TypeError(f"not a benchmark event: {type(event).__name__}")

    @apply_event.register
    def _level_started(self, event: LevelStarted) -> None:
        self._ensure_row(event.concurrency)
        self._levels_running[event.concurrency] = _Running(event.planned, event.duration_s, self.clock())
        self._update(event.concurrency, progress=self._styled(line_bar(0, BAR_WIDTH) + "   0%", "running"))
        self._set_status(f"Level c={event.concurrency} running…")

    @apply_event.register
    def _level_progressed(self, event: LevelProgress) -> None:
        self._ensure_row(event.concurrency)
        fraction = self._fraction(event)
        running = self._levels_running.get(event.concurrency)
        done = f"{event.done}/{running.planned}" if running and running.planned else f"{fraction * 100:3.0f}%"
        self._update(
            event.concurrency,
            tok_s=self._styled(fmt_num(event.tok_s) if event.tokens else "…", "running"),  # no token yet: no rate
            errors=self._errors_cell(event.errors),
            progress=self._styled(f"{line_bar(fraction, BAR_WIDTH)} {done}", "running"),
        )
        if event.concurrency == 0:  # open loop: what arrives is not what the server has finished
            self._set_status(f"Open loop: {event.done} done, {event.in_flight} in flight, {event.errors} errors")
        else:
            self._set_status(f"Level c={event.concurrency}: {self._level_progress(event, fraction)}")

    @apply_event.register
    def _level_done(self, event: LevelDone) -> None:
        self._ensure_row(event.result.concurrency)
        self._levels_running.pop(event.result.concurrency, None)
        self._fill_done(event.result)

    @apply_event.register
    def _run_done(self, event: RunDone) -> None:
        in_flight = set(self._levels_running)
        self._levels_running.clear()
        self._finish(event, in_flight)

    def cell_text(self, concurrency: int, column: str) -> str:
        return self._cells[concurrency][column].plain

    # -- width -----------------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the columns that fit, in PRIORITY order (a narrow terminal keeps c, tok/s, Δ, progress,
        TTFT p99 and ITL); the table is rebuilt only when that set changes."""
        width = self.size.width
        if width <= 0:
            return
        visible = columns_for(width - 2, self._widths(), self._hidden())  # 2: the vertical scrollbar, when it shows
        if visible != self.visible_columns:
            self.visible_columns = visible
            self._rebuild()

    def _hidden(self) -> frozenset[str]:
        """Columns not offered at all: goodput without an SLO (no level measured it)."""
        if self._slo or any(lv.goodput_req_s is not None for lv in self.results.values()):
            return frozenset()
        return GOODPUT

    def _widths(self) -> dict[str, int]:
        return {key: max([cell_len(label)] + [row[key].cell_len for row in self._cells.values()])
                for key, label in COLUMNS}

    def _rebuild(self) -> None:
        table = self.table
        row = table.cursor_row
        table.clear(columns=True)
        for key, label in COLUMNS:
            if key in self.visible_columns:
                table.add_column(label, key=key)
        for concurrency in self._cells:
            self._add_table_row(concurrency)
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))

    # -- rows ------------------------------------------------------------------------------------

    def _reset(self, previous: list[LevelResult] | None, limit: LatencyLimit | None = None,
               slo: Sequence[str] = ()) -> None:
        self.results = {}
        self._slo = tuple(slo)
        self.warnings = []
        self._notes = {}
        self._levels_running = {}
        self._cells = {}
        self._previous = {lv.concurrency: lv for lv in previous or []}
        self._limit = limit or LatencyLimit()
        self.table.clear()
        self._render_warnings()

    def _ensure_row(self, concurrency: int) -> None:
        if concurrency not in self._cells:
            self._add_row(concurrency)

    def _add_row(self, concurrency: int) -> None:
        previous = self._previous.get(concurrency)
        cells: dict[str, Text] = {key: self._styled(PENDING, "pending") for key, _ in COLUMNS}
        cells["c"] = Text(str(concurrency) if concurrency else OPEN_LOOP, justify="right")  # 0: open-loop arrivals
        cells["prev"] = Text(fmt_num(previous.output_tok_s) if previous and previous.measured else MISSING,
                             justify="right")
        queue = self._limit.note(concurrency)  # known before it runs: the server's capacity is
        cells["progress"] = self._styled(queue, "queued") if queue else self._styled(" " * BAR_WIDTH + "   –", "pending")
        self._cells[concurrency] = cells
        self._add_table_row(concurrency)
        self._fit()

    def _add_table_row(self, concurrency: int) -> None:
        cells = self._cells[concurrency]
        self.table.add_row(*(cells[key] for key in self._shown()), key=str(concurrency))

    def _shown(self) -> list[str]:
        return [key for key, _ in COLUMNS if key in self.visible_columns]

    def _update(self, concurrency: int, **cells: Text) -> None:
        self._cells[concurrency].update(cells)
        for column, value in cells.items():
            if column in self.visible_columns:
                self.table.update_cell(str(concurrency), column, value, update_width=True)
        self._fit()

    def _fill_done(self, level: LevelResult, key: int | None = None) -> None:
        """A finished level into its row: `key`, else its concurrency (0 for an open-loop level run live)."""
        row = level.concurrency if key is None else key
        self.results[row] = level
        previous = self._previous.get(row)
        change = (delta_pct(previous.output_tok_s if previous and previous.measured else None, level.output_tok_s)
                  if level.measured else None)
        accept = f"{_fmt_opt(level.accept_length_server)}/{_fmt_opt(level.accept_length_client)}"
        if (source := level.accept_source) is not None:  # where the level's own figure came from
            accept += f" {source.short}"
        tok_s = (fmt_num(level.output_tok_s) + ("~" if level.estimated else "")) if level.measured else "failed"
        if level.rate is not None:
            self._update(row, c=Text(f"{level.rate:.4g}/s", justify="right"))
        self._update(
            row,
            tok_s=Text(tok_s, justify="right", style="bold"),
            good_req=Text(fmt_num(level.goodput_req_s, 2), justify="right"),
            good_tok=Text(fmt_num(level.goodput_tok_s), justify="right"),
            delta=self._styled(fmt_delta(change), _KIND.get(delta_tone(change), "")),
            per_req=Text(fmt_num(level.per_request_tok_s.p50), justify="right"),
            ttft_p50=Text(fmt_ms(level.ttft_ms.p50), justify="right"),
            ttft_p99=Text(fmt_ms(level.ttft_ms.p99), justify="right"),
            itl_p50=Text(fmt_ms(level.itl_ms.p50), justify="right"),
            tpot_p50=Text(fmt_ms(level.tpot_ms.p50), justify="right"),
            accept=Text(accept, justify="right"),
            srv_avg=Text(_fmt_opt(level.server_avg_accept_length), justify="right"),
            errors=self._errors_cell(level.errors),
            progress=self._styled(queue, "queued") if (queue := self._limit.note(row))
            else self._styled(f"{line_bar(1.0, BAR_WIDTH)} 100%", "done"),
        )
        self._collect_warnings(level)

    def _errors_cell(self, errors: int) -> Text:
        return self._styled(fmt_int(errors), "error" if errors else "")

    def _level_progress(self, event: LevelProgress, fraction: float) -> str:
        """"12/32 requests, about 8 s left" (or the time left of a timed level), at this level's own pace so far."""
        running = self._levels_running.get(event.concurrency)
        if running is None:
            return "running…"
        elapsed = self.clock() - running.started
        if running.planned > 0:
            return f"{event.done}/{running.planned} requests, {eta_words(event.done, running.planned, elapsed)}".rstrip(", ")
        total = running.duration_s or 0.0
        return f"{duration_words(elapsed)} of {duration_words(total)}, {eta_words(elapsed, total, elapsed)}".rstrip(", ")

    def _fraction(self, event: LevelProgress) -> float:
        running = self._levels_running.get(event.concurrency)
        if running is None:
            return 0.0
        if running.planned > 0:
            return min(1.0, event.done / running.planned)
        if running.duration_s:
            return min(1.0, (self.clock() - running.started) / running.duration_s)
        return 0.0

    def _styled(self, text: str, kind: str) -> Text:
        """Foreground and text style only (partial): a cell with its own background would paint over
        the table's cursor and zebra rows, which is what made Δ unreadable in the highlighted row."""
        return Text(text, style=foreground_style(self, f"bench--{kind}") if kind else "", justify="right")

    # -- status and warnings ---------------------------------------------------------------------

    def _finish(self, event: RunDone, in_flight: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        if event.error:
            self._set_status(f"Benchmark failed: {event.error}")
        elif event.cancelled:
            self._set_status(f"Benchmark cancelled after {len(self.results)} level(s).")
        else:
            summary = f" {pick(self.results.values(), self._limit).summary()}." if self.results else ""
            self._fit()  # the columns of this run's widths: the pair is explained only where its column shows
            laid_out = self.size.width > 0  # (not yet laid out: which columns show is not known)
            pair = ACCEPT_PAIR_LEGEND if laid_out and "accept" in self.visible_columns else None  # "1.64/1.61"
            marks = accept_source_legend(self.results.values(),  # and "srv avg" only where its column shows
                                         server_avg=not laid_out or "srv_avg" in self.visible_columns)
            legend = "; ".join(filter(None, (pair, marks)))
            self._set_status(f"Benchmark done: {len(self.results)} level(s).{summary}" + (f" ({legend})" if legend else ""))
        for concurrency in list(self._cells):
            if concurrency in self.results:
                continue
            stopped = event.cancelled and concurrency in in_flight  # a level cut short, its numbers partial
            self._update(concurrency, progress=self._styled("cancelled" if stopped else "not run", "error" if stopped else "pending"))

    def _collect_warnings(self, level: LevelResult) -> None:
        notes = list(level.warnings)
        if level.errors:
            kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(level.error_kinds.items()))
            notes.append(f"{level.errors} failed request(s)" + (f" ({kinds})" if kinds else ""))
        if level.estimated:
            notes.append("tokens estimated from stream chunks (the server sent no usage)")
        for note in notes:  # the profile's caveats repeat at every level: say each once, with its levels
            self._notes.setdefault(note, []).append(level.concurrency)
        self.warnings = [f"c={','.join(map(str, levels))}: {note}" for note, levels in self._notes.items()]
        self._render_warnings()

    def _render_warnings(self) -> None:
        """Only a change is drawn: `Static.update` lays the whole screen out, and with no warning (most runs) the
        line is not even displayed — every level and every new run re-laid out the screen for nothing (issue 34)."""
        text = "\n".join(f"⚠ {w}" for w in self.warnings)
        if text == self._warnings_shown:
            return
        self._warnings_shown = text
        widget = self.query_one("#bench-warnings", Static)
        widget.update(text)
        widget.set_class(not self.warnings, "-empty")

    def _set_status(self, text: str) -> None:
        self.status = text
        self.query_one("#bench-status", Static).update(text)


_KIND: dict[Tone | None, str] = {Tone.GOOD: "better", Tone.BAD: "worse"}


def _fmt_opt(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"
