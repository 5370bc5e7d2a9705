"""The rate search from the panel (issue 33): the highest request rate the running unit serves within the SLO, by
open-loop probes — with its progress: probes used of at most six, the rate being probed, each probe's verdict and
why, the bracket so far and any saturation, named.

The loop owns the intent (`loop.rate_search.search_max_rate`, which records the probes as one trial); the worker
only posts its events, each its own message (`ui.task_messages`), and the `@on` handlers below render them.
Escape cancels a running search (nothing was pushed: the unit is as it was) and closes after.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from specdec_tui.bench.rate_search import MAX_PROBES, RateSearch, probe_why
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.number_format import MISSING, fmt_int, fmt_ms, fmt_num
from specdec_tui.core.words import in_words
from specdec_tui.loop.rate_search import slo_words
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui import task_messages as tm
from specdec_tui.ui.screens.task_screen import TaskCancelled, TaskFailed, TaskScreen
from specdec_tui.ui.widgets.keyed_table import cell_plain, keyed_table

COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "#"),
    ("rate", "rate/s"),
    ("verdict", "verdict"),
    ("served", "served/s"),
    ("good", "good/s"),
    ("tok_s", "tok/s"),
    ("ttft_p99", "TTFT p99"),
    ("itl_p99", "ITL p99"),
    ("flight", "in flight"),
    ("why", "why missed"),  # last: the longest, cut by a narrow terminal before any figure
)


class RateSearchScreen(TaskScreen[RateSearch]):
    """Runs the rate search with `profile` (its SLO) on the runner's host; dismisses with the RateSearch."""

    TASK = "rate search"
    BINDINGS = [Binding("escape,q", "close", "Cancel / back", id="rate-search-close")]
    DEFAULT_CSS = """
    RateSearchScreen #rate-title { padding: 0 1; text-style: bold; }
    RateSearchScreen #rate-progress { padding: 0 1; height: auto; }
    RateSearchScreen #rate-search-status { padding: 0 1; height: auto; color: $text-muted; }
    RateSearchScreen #rate-table { height: 1fr; }
    RateSearchScreen #rate-search-result { padding: 0 1; height: auto; }
    """

    def __init__(self, runner: TrialLoop | None, profile: BenchProfile) -> None:
        """`runner` None: the screen only renders the events posted to it (`post_task_event`), as a snapshot does."""
        super().__init__()
        self.runner = runner
        self.profile = profile
        self.probes_used = 0
        self.current_rate: float | None = None
        self.verdict_so_far = "no probe has ended yet"
        self.saturation = ""
        self.progress_lines: list[str] = []  # every progress line shown, in order (as `log_lines` the status lines)

    def compose(self) -> ComposeResult:
        size = f"{self.profile.requests} requests" if self.profile.requests else f"{self.profile.duration_s:g} s"
        yield Static(f"Max rate within {slo_words(self.profile)}: up to {MAX_PROBES} open-loop probes of {size}, "
                     "on the unit running now", id="rate-title", markup=False)
        yield Static(self.progress_text(), id="rate-progress", markup=False)
        yield Static("starting…", id="rate-search-status", markup=False)
        yield keyed_table("rate-table", COLUMNS)
        yield Static("", id="rate-search-result", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.running = True
        if self.runner is not None:
            self.run_search_worker(self.runner)

    @work(exclusive=True, group="rate search")
    async def run_search_worker(self, runner: TrialLoop) -> None:
        from specdec_tui.loop.rate_search import search_max_rate

        try:
            await search_max_rate(runner, self.profile, on_event=self.post_task_event)
        except asyncio.CancelledError:
            self.post_message(TaskCancelled())
            raise
        except Exception as err:  # noqa: BLE001 - every failure becomes words
            self.post_message(TaskFailed(in_words(err)))

    def progress_text(self) -> str:
        """"probe 3 of ≤ 6 at 21.5 req/s · met at 16, missed at 40 · saturated at 40 requests/s: queue growing"."""
        rate = f" at {self.current_rate:.4g} req/s" if self.current_rate is not None and self.running else ""
        parts = [f"probe {self.probes_used} of ≤ {MAX_PROBES}{rate}", self.verdict_so_far]
        if self.saturation:
            parts.append(f"saturated {self.saturation}")
        return " · ".join(parts)

    def _show_progress(self) -> None:
        text = self.progress_text()
        self.progress_lines.append(text)
        self.query_one("#rate-progress", Static).update(text)

    @on(tm.RateProbeStartedMessage)
    def _probe_started(self, message: tm.RateProbeStartedMessage) -> None:
        event = message.event
        self.probes_used = event.index + 1
        self.current_rate = event.rate
        self._show_progress()
        table = self.query_one("#rate-table", DataTable)
        cells = [Text(str(event.index + 1), justify="right"), Text(f"{event.rate:.4g}", justify="right"),
                 Text("running…")] + [Text(MISSING, justify="right") for _ in COLUMNS[3:-1]] + [Text("")]
        table.add_row(*cells, key=str(event.index))
        self.say(f"probe {event.index + 1}: {event.rate:.4g} requests/s arriving (open loop)…")

    @on(tm.LevelProgressMessage)
    def _level_progress(self, message: tm.LevelProgressMessage) -> None:
        event = message.event
        if self.probes_used:
            key = str(self.probes_used - 1)
            table = self.query_one("#rate-table", DataTable)
            table.update_cell(key, "flight", Text(fmt_int(event.in_flight), justify="right"), update_width=True)
            table.update_cell(key, "tok_s", Text(fmt_num(event.tok_s), justify="right"), update_width=True)
            self.say(f"probe {self.probes_used}: {event.done} done, {event.in_flight} in flight, {event.errors} errors")

    @on(tm.RateProbeDoneMessage)
    def _probe_done(self, message: tm.RateProbeDoneMessage) -> None:
        event = message.event
        lv = event.level
        served = lv.requests / lv.duration_s if lv.duration_s > 0 else None
        cells = {
            "verdict": Text("met" if event.met else "missed", style="green" if event.met else "bold red"),
            "why": Text(probe_why(lv)),
            "served": Text(fmt_num(served), justify="right"),
            "good": Text(fmt_num(lv.goodput_req_s), justify="right"),
            "tok_s": Text(fmt_num(lv.output_tok_s), justify="right"),
            "ttft_p99": Text(fmt_ms(lv.ttft_ms.p99), justify="right"),
            "itl_p99": Text(fmt_ms(lv.itl_ms.p99), justify="right"),
            "flight": Text(fmt_int(lv.peak_in_flight), justify="right"),
        }
        table = self.query_one("#rate-table", DataTable)
        for column, cell in cells.items():
            table.update_cell(str(event.index), column, cell, update_width=True)
        met_at = f"met at {event.met_at:.4g}" if event.met_at is not None else "nothing met yet"
        missed_at = f"missed at {event.missed_at:.4g}" if event.missed_at is not None else "nothing missed yet"
        self.verdict_so_far = f"{met_at}, {missed_at} req/s"
        self.saturation = event.saturation
        self._show_progress()

    @on(tm.RateSearchDoneMessage)
    def _search_done(self, message: tm.RateSearchDoneMessage) -> None:
        search = message.event.search
        self.outcome = search
        self.running = False
        self.probes_used = len(search.probes)
        self._show_progress()
        self.say(f"done after {len(search.probes)} probe(s)")
        self.show_result(f"{search.words()}.\nThe probes are trial {message.event.trial.id} of the session "
                         "(the Bench chart draws them against the rate). Press escape to go back.")

    def cell_text(self, index: int, column: str) -> str:
        return cell_plain(self.query_one("#rate-table", DataTable), str(index), column)

    def failed_words(self, reason: str) -> str:  # nothing was pushed: no unit to restore
        return f"Rate search failed: {reason}\nNothing was pushed: the unit runs as before. Press escape to go back."

    def cancelled_words(self) -> str:
        return ("Rate search cancelled; the probes so far are in the session. Nothing was pushed. "
                "Press escape to go back.")
