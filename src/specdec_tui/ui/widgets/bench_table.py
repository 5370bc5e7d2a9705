"""The benchmark table: one row per concurrency, filling live while a level runs, compared to the last trial.

The operator's question after each push is "did it get faster, and where?", so every row shows the
previous trial's aggregate tok/s beside the new one with a coloured change, and the caveats that make a
number untrustworthy (errors, estimated tokens, inflated acceptance) are listed under the table.

Public API (for the app shell):
    BenchTable(id=...)
    .start_run(concurrencies: Sequence[int], previous: list[LevelResult] | None = None)   # rows pending "…"
    .apply_event(event: BenchEvent)      # LevelStarted / LevelProgress / LevelDone / RunDone from bench.events
    (named apply_event, not on_event: Textual's MessagePump.on_event is its own event dispatcher)
    .show_results(levels: list[LevelResult], previous: list[LevelResult] | None = None)  # a finished trial
    .results: dict[int, LevelResult]  # levels finished so far, by concurrency
    .cell_text(concurrency, column) -> str   # plain text of a cell (column keys: COLUMNS)
    .warnings: list[str], .status: str
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
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
from specdec_tui.core.progress import duration_words, eta_words
from specdec_tui.core.results import LevelResult, accept_source_legend
from specdec_tui.ui.cell_style import foreground_style
from specdec_tui.ui.format import (
    MISSING,
    delta_style,
    fmt_delta,
    fmt_int,
    fmt_ms,
    fmt_num,
    line_bar,
)

# (key, label) in display order
COLUMNS: tuple[tuple[str, str], ...] = (
    ("c", "C"),
    ("tok_s", "tok/s"),
    ("prev", "prev"),
    ("delta", "Δ"),
    ("per_req", "req tok/s"),
    ("ttft_p50", "TTFT p50"),
    ("ttft_p99", "TTFT p99"),
    ("tpot_p50", "TPOT p50"),
    ("accept", "accept s/c"),
    ("errors", "err"),
    ("progress", "progress"),
)
PENDING = "…"
BAR_WIDTH = 8


@dataclass(slots=True)
class _Running:
    """What we know about the level in flight (progress events carry no plan, so keep it here)."""

    planned: int
    duration_s: float | None
    started: float


class BenchTable(Vertical):
    """Benchmark rows per concurrency with live progress and deltas vs the previous trial (API in module doc)."""

    COMPONENT_CLASSES = {"bench--better", "bench--worse", "bench--pending", "bench--running", "bench--done", "bench--error"}
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
        self._notes: dict[str, list[int]] = {}
        self.status = "No benchmark yet — press b to run one."
        self._previous: dict[int, LevelResult] = {}
        self._running: dict[int, _Running] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[Text | str] = DataTable(id="bench-data", cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static(self.status, id="bench-status")
        yield Static("", id="bench-warnings", classes="-empty")

    @property
    def table(self) -> DataTable:
        return self.query_one("#bench-data", DataTable)

    # -- public API ------------------------------------------------------------------------------

    def start_run(self, concurrencies: Sequence[int], previous: list[LevelResult] | None = None) -> None:
        """Reset to one pending row per concurrency of the profile."""
        self._reset(previous)
        for concurrency in concurrencies:
            self._add_row(concurrency)
        self._set_status(f"Running {len(concurrencies)} levels…")

    def show_results(self, levels: list[LevelResult], previous: list[LevelResult] | None = None) -> None:
        """Show a finished (or stored) trial's levels."""
        self._reset(previous)
        for level in sorted(levels, key=lambda lv: lv.concurrency):
            self._add_row(level.concurrency)
            self._fill_done(level)
        self._set_status(f"{len(levels)} level{'s' if len(levels) != 1 else ''}.")

    def on_event(self, event: Any) -> Any:  # type: ignore[override]
        """Bench events (the contract's name for this API) are applied now; Textual's own events go on.

        Textual dispatches its events with `await widget.on_event(event)`, so for those this returns
        the framework's coroutine unchanged.
        """
        if isinstance(event, (LevelStarted, LevelProgress, LevelDone, RunDone)):
            self.apply_event(event)
            return None
        return super().on_event(event)

    def apply_event(self, event: BenchEvent) -> None:
        """Apply one engine event to the table."""
        if isinstance(event, LevelStarted):
            self._ensure_row(event.concurrency)
            self._running[event.concurrency] = _Running(event.planned, event.duration_s, self.clock())
            self._update(event.concurrency, progress=self._styled(line_bar(0, BAR_WIDTH) + "   0%", "running"))
            self._set_status(f"Level c={event.concurrency} running…")
        elif isinstance(event, LevelProgress):
            self._ensure_row(event.concurrency)
            fraction = self._fraction(event)
            running = self._running.get(event.concurrency)
            done = f"{event.done}/{running.planned}" if running and running.planned else f"{fraction * 100:3.0f}%"
            self._update(
                event.concurrency,
                tok_s=self._styled(fmt_num(event.tok_s), "running"),
                errors=self._errors_cell(event.errors),
                progress=self._styled(f"{line_bar(fraction, BAR_WIDTH)} {done}", "running"),
            )
            self._set_status(f"Level c={event.concurrency}: {self._level_progress(event, fraction)}")
        elif isinstance(event, LevelDone):
            self._ensure_row(event.result.concurrency)
            self._running.pop(event.result.concurrency, None)
            self._fill_done(event.result)
        elif isinstance(event, RunDone):
            in_flight = set(self._running)
            self._running.clear()
            self._finish(event, in_flight)

    def cell_text(self, concurrency: int, column: str) -> str:
        value = self.table.get_cell(str(concurrency), column)
        return value.plain if isinstance(value, Text) else str(value)

    # -- rows ------------------------------------------------------------------------------------

    def _reset(self, previous: list[LevelResult] | None) -> None:
        self.results = {}
        self.warnings = []
        self._notes = {}
        self._running = {}
        self._previous = {lv.concurrency: lv for lv in previous or []}
        self.table.clear()
        self._render_warnings()

    def _ensure_row(self, concurrency: int) -> None:
        if str(concurrency) not in self.table.rows:
            self._add_row(concurrency)

    def _add_row(self, concurrency: int) -> None:
        previous = self._previous.get(concurrency)
        cells: dict[str, Text | str] = {key: self._styled(PENDING, "pending") for key, _ in COLUMNS}
        cells["c"] = Text(str(concurrency), justify="right")
        cells["prev"] = Text(fmt_num(previous.output_tok_s) if previous else MISSING, justify="right")
        cells["progress"] = self._styled(" " * BAR_WIDTH + "   –", "pending")
        self.table.add_row(*(cells[key] for key, _ in COLUMNS), key=str(concurrency))

    def _update(self, concurrency: int, **cells: Text | str) -> None:
        for column, value in cells.items():
            self.table.update_cell(str(concurrency), column, value, update_width=True)

    def _fill_done(self, level: LevelResult) -> None:
        self.results[level.concurrency] = level
        previous = self._previous.get(level.concurrency)
        change = delta_pct(previous.output_tok_s if previous else None, level.output_tok_s)
        accept = f"{_fmt_opt(level.accept_length_server)}/{_fmt_opt(level.accept_length_client)}"
        if (source := level.accept_source) is not None:  # where the level's own figure came from
            accept += f" {source.short}"
        tok_s = fmt_num(level.output_tok_s) + ("~" if level.estimated else "")
        self._update(
            level.concurrency,
            tok_s=Text(tok_s, justify="right", style="bold"),
            delta=self._styled(fmt_delta(change), _KIND.get(delta_style(change), "")),
            per_req=Text(fmt_num(level.per_request_tok_s.p50), justify="right"),
            ttft_p50=Text(fmt_ms(level.ttft_ms.p50), justify="right"),
            ttft_p99=Text(fmt_ms(level.ttft_ms.p99), justify="right"),
            tpot_p50=Text(fmt_ms(level.tpot_ms.p50), justify="right"),
            accept=Text(accept, justify="right"),
            errors=self._errors_cell(level.errors),
            progress=self._styled(f"{line_bar(1.0, BAR_WIDTH)} 100%", "done"),
        )
        self._collect_warnings(level)

    def _errors_cell(self, errors: int) -> Text:
        return self._styled(fmt_int(errors), "error" if errors else "")

    def _level_progress(self, event: LevelProgress, fraction: float) -> str:
        """"12/32 requests, about 8 s left" (or the time left of a timed level), at this level's own pace so far."""
        running = self._running.get(event.concurrency)
        if running is None:
            return "running…"
        elapsed = self.clock() - running.started
        if running.planned > 0:
            return f"{event.done}/{running.planned} requests, {eta_words(event.done, running.planned, elapsed)}".rstrip(", ")
        total = running.duration_s or 0.0
        return f"{duration_words(elapsed)} of {duration_words(total)}, {eta_words(elapsed, total, elapsed)}".rstrip(", ")

    def _fraction(self, event: LevelProgress) -> float:
        running = self._running.get(event.concurrency)
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
            best = max(self.results.values(), key=lambda lv: lv.output_tok_s, default=None)
            peak = f" Peak {fmt_num(best.output_tok_s)} tok/s at c={best.concurrency}." if best else ""
            legend = accept_source_legend(self.results.values())  # what the ctr/req/est marks mean
            self._set_status(f"Benchmark done: {len(self.results)} level(s).{peak}" + (f" ({legend})" if legend else ""))
        for row in self.table.rows:
            concurrency = int(row.value or 0)
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
        widget = self.query_one("#bench-warnings", Static)
        widget.update("\n".join(f"⚠ {w}" for w in self.warnings))
        widget.set_class(not self.warnings, "-empty")

    def _set_status(self, text: str) -> None:
        self.status = text
        self.query_one("#bench-status", Static).update(text)


_KIND = {"success": "better", "error": "worse"}


def _fmt_opt(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"
