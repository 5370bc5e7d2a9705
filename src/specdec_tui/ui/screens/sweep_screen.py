"""A sweep from the panel: a form (which flag, which values, how many runs, what "best" means), then the
progress — each value's status, the two curves the seed drew by hand (c=1 tok/s going up,
max_running_requests going down), the winner with its reasons, and "apply the winner?".

With several hosts in the form's hosts field the sweep runs on them at once (`parallel_sweep`): each value's
status names its host, and "apply the winner?" pushes every host its own edit of the winner.

The worker runs `sweep.run_sweep` (or `parallel_sweep.run_parallel_sweep`) and only posts messages; the
handlers here own the state. The sweep module leaves the host on the unit that ran before (also after a
cancel or a failure); this screen says so, and applies the winner only when the user confirms.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Static

from specdec_tui.bench.validity import profile_sweep_warnings, trials_sweep_warnings
from specdec_tui.core.config import Config
from specdec_tui.core.level_pace import LevelPace
from specdec_tui.core.number_format import MISSING, fmt_int, fmt_num
from specdec_tui.core.session import Trial
from specdec_tui.core.status_tone import Tone, rich_style, status_tone
from specdec_tui.core.sweep_rules import CurvePoint, curve
from specdec_tui.core.words import in_words
from specdec_tui.loop.host_group import OtherHosts
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_plan import SweepOutcome, SweepPlan
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui import task_messages as tm
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.task_screen import (
    Settled,
    TaskCancelled,
    TaskFailed,
    TaskScreen,
)
from specdec_tui.ui.widgets.curve_plot import CurvePlot
from specdec_tui.ui.widgets.keyed_table import cell_plain, keyed_table

ROW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("value", "value"),
    ("runs", "ok/fail"),
    ("c1", "low-c tok/s"),
    ("req", "req p50"),
    ("mrr", "max_run_req"),
    ("high", "high-c tok/s"),
    ("status", "status"),  # last: "bench c=32 20/32" pushed the high-c figure off 80 columns
)


class SweepScreen(TaskScreen[SweepOutcome]):
    """Runs `plan` through `runner` (a workflow.TrialLoop) and shows the progress; dismisses with the
    `sweep.SweepOutcome` (None when it did not finish). Escape cancels a running sweep first."""

    TASK = "sweep"
    BINDINGS = [Binding("escape,q", "close", "Cancel / back", id="sweep-close")]
    DEFAULT_CSS = """
    SweepScreen #sweep-title { padding: 0 1; text-style: bold; }
    SweepScreen #sweep-status { padding: 0 1; height: auto; }
    SweepScreen #sweep-warnings { padding: 0 1; height: auto; color: $text-warning; }
    SweepScreen #sweep-warnings.-empty { display: none; }
    SweepScreen #sweep-values-table { height: auto; max-height: 12; }
    SweepScreen #sweep-curves { height: 1fr; min-height: 8; }
    SweepScreen #sweep-result { padding: 0 1; height: auto; max-height: 12; }
    """

    def __init__(self, runner: TrialLoop, plan: SweepPlan, *, config: Config | None = None) -> None:
        super().__init__()
        self.runner = runner
        self.plan = plan
        self.config = config  # where the other hosts of plan.hosts are found
        self.loops: list[TrialLoop] = [runner]  # with plan.hosts: the other hosts' loops join once opened
        self.others = OtherHosts()
        self.trials_by_value: dict[str, list[Trial]] = {}
        self.status_by_value: dict[str, str] = {v: "pending" for v in plan.values}
        self.current_by_host: dict[str, str] = {}  # the value each host runs now
        self.planned_by_level: dict[int, int] = {}  # requests each level measures, for "bench c=64 14/64"
        self.applied: str = ""  # what happened after "apply the winner?"
        self.applying = False  # its pushes on their way: escape waits (a cancel left a host half-restarted)
        self._step: tuple[int, int, str] | None = None  # the value on its way (one host): index, total, words
        self.pace = LevelPace()  # the share of that value done, by the time its levels take (core.level_pace)

    @property
    def several(self) -> bool:
        return len(self.plan.hosts) > 1

    def compose(self) -> ComposeResult:
        on = f" on {', '.join(self.plan.hosts)}" if self.several else ""
        yield Static(f"Sweep --{self.plan.flag} over {', '.join(self.plan.values)}{on} ({self.plan.repeats} run(s) each)",
                     id="sweep-title", markup=False)
        warnings = profile_sweep_warnings(self.runner.profile)  # said before the winner is, not after
        yield Static(_warning_text(warnings), id="sweep-warnings", markup=False, classes="" if warnings else "-empty")
        yield Static("starting…", id="sweep-status", markup=False)
        yield keyed_table("sweep-values-table", ROW_COLUMNS)
        with Horizontal(id="sweep-curves"):
            yield CurvePlot("low-concurrency tok/s (up is better)", id="curve-tok")
            yield CurvePlot("max_running_requests (capacity)", id="curve-mrr")
        yield Static("", id="sweep-result", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#sweep-values-table", DataTable)
        for value in self.plan.values:
            table.add_row(*self._cells(value, None), key=value)
        self.running = True
        self.run_sweep_worker()

    # -- workers: run and post -------------------------------------------------------------------
    @work(exclusive=True, group="sweep")
    async def run_sweep_worker(self) -> None:
        from specdec_tui.loop.parallel_sweep import sweep_running_units

        def post(event: object) -> None:
            self.post_task_event(event)

        try:
            # the loop held from the first step, before a host is read or reached (as the tune's: it was claimed after,
            # and b or p still went through while the screen said the sweep ran)
            with self.runner.task(Busy.SWEEP):
                if self.several:
                    if self.config is None:
                        raise ValueError("a sweep on several hosts needs the config that names them")
                    self.loops = [self.runner, *await self.others.open(self.config, self.plan.hosts[1:], self.runner)]
                await sweep_running_units(self.loops, self.plan, on_event=post)
        except asyncio.CancelledError:
            self.post_message(TaskCancelled())
            raise
        except Exception as err:  # noqa: BLE001 - every failure becomes words
            from specdec_tui.loop.host_group import with_host

            self.post_message(TaskFailed(with_host(err, in_words(err))))

    @work(exclusive=True, group="sweep")
    async def apply_winner_worker(self, value: str, units_by_host: dict[str, dict[str, str]]) -> None:
        """Every host of the sweep onto the winner's unit (`loop.parallel_sweep.apply_winner`); said once settled."""
        from specdec_tui.loop.parallel_sweep import apply_winner

        def post(name: str, event: object) -> None:
            self.post_task_event(event, name if self.several else None)

        settled = await apply_winner(self.loops, value, units_by_host, post)
        problems = [f"{name}: {problem}" if self.several else problem for name, problem in settled if problem]
        self.post_message(Settled(value, "; ".join(problems)))

    def action_close(self) -> None:
        if self.applying:  # cancelled, the apply left a host half-restarted and the screen running for good
            return self.say("applying the winner: wait until every host runs it…")
        super().action_close()

    async def on_unmount(self) -> None:
        await self.others.close()  # the other hosts' connections; the panel's own host stays open

    # -- handlers: own the state -----------------------------------------------------------------
    def _host_of(self, message: tm.TaskMessage[object]) -> tuple[str, str | None, str]:
        """The host a message came from, the value it is running and "host: " to prefix (on several hosts)."""
        host = message.host or self.runner.host.info.name
        return host, self.current_by_host.get(host), f"{host}: " if self.several else ""

    @on(tm.SweepValueStartedMessage)
    def _value_started(self, message: tm.SweepValueStartedMessage) -> None:
        event, (host, _, _) = message.event, self._host_of(message)
        self.current_by_host[event.host or host] = event.value
        self._set_status(event.value, f"{event.host}: starting" if self.several else "starting")
        self.say(self.step_words(event.index, event.total, event.label + (f" on {event.host}" if self.several else "")))
        self._step = (event.index, event.total, event.label)
        self.pace.value_started()

    @on(tm.SweepHostFailedMessage)
    def _host_failed(self, message: tm.SweepHostFailedMessage) -> None:
        event = message.event
        self.say(f"{event.host} failed: {event.reason}")
        for value in event.values:
            self._set_status(value, f"{event.host} failed")

    @on(tm.PhaseMessage)
    def _phase(self, message: tm.PhaseMessage) -> None:
        event, (_, current, where) = message.event, self._host_of(message)
        if event.name in ("restore", "gate"):  # the sweep's own steps, not the value's (its row stays as it ended)
            self.say(f"{where}{event.name}: {event.detail}")
        elif current is not None and event.name != "done":
            detail = f" ({event.detail})" if event.detail and event.name == "bench" else ""
            self._set_status(current, f"{where}{event.name}{detail}")

    @on(tm.LevelStartedMessage)
    def _level_started(self, message: tm.LevelStartedMessage) -> None:
        self.planned_by_level[message.event.concurrency] = message.event.planned
        self.pace.level_started(message.event.concurrency, time.monotonic())
        self._level_status(message, f"bench c={message.event.concurrency}")

    @on(tm.LevelProgressMessage)
    def _level_progress(self, message: tm.LevelProgressMessage) -> None:
        event = message.event
        planned = self.planned_by_level.get(event.concurrency, 0)  # 0: a level that runs for a duration
        # no "bench " before it: "bench c=64 40/64" was cut to "bench c=64 40/" at 80×24 ("bench c=64" came first)
        self._level_status(message, f"c={event.concurrency} {event.done}" + (f"/{planned}" if planned else ""))
        self._show_time_left()  # it moves within a long level too (it stood still through c=64's minutes)

    @on(tm.LevelDoneMessage)
    def _level_done(self, message: tm.LevelDoneMessage) -> None:
        self._level_status(message, f"bench c={message.event.result.concurrency} done")
        self.pace.level_done(message.event.result.concurrency, time.monotonic())
        self._show_time_left()

    def _show_time_left(self) -> None:
        """The time left from the share of the value done, the first value's too (one host)."""
        levels = self.runner.profile.concurrency
        if self._step is not None and not self.several and levels:
            index, total, label = self._step
            share = self.pace.share(levels, self.plan.repeats, time.monotonic())
            self.show_status(self.step_words(index, total, label, done=index + share))

    def _level_status(self, message: tm.TaskMessage[object], status: str) -> None:
        _, current, where = self._host_of(message)
        if current is not None:
            self._set_status(current, f"{where}{status}")

    @on(tm.SweepTrialDoneMessage)
    def _trial_done(self, message: tm.SweepTrialDoneMessage) -> None:
        event = message.event
        self.trials_by_value.setdefault(event.value, []).append(event.trial)
        runs = len(self.trials_by_value[event.value])
        finished = runs >= self.plan.repeats or event.trial.status != "ok"
        self._set_status(event.value, event.trial.status if finished else f"run {runs + 1} of {self.plan.repeats}")
        self._refresh_curves()

    @on(tm.SweepStoppedMessage)
    def _stopped(self, message: tm.SweepStoppedMessage) -> None:
        self.say(f"stopped early: {message.event.reason}")
        for value, status in self.status_by_value.items():
            if status == "pending":
                self._set_status(value, "skipped")

    def show_cancelled(self) -> None:
        """The value cut short says "cancelled" and those not reached "skipped" (the row kept its last progress,
        "bench c=1 5/8"); a value that finished, or whose host failed, keeps what it says."""
        for value, status in list(self.status_by_value.items()):
            trials = self.trials_by_value.get(value, [])
            if (trials and (len(trials) >= self.plan.repeats or trials[-1].status != "ok")) or status.endswith("failed"):
                continue
            self._set_status(value, "skipped" if status == "pending" else "cancelled")

    @on(tm.SweepDoneMessage)
    def _sweep_done(self, message: tm.SweepDoneMessage) -> None:
        self._done(message.event.outcome)

    @on(Settled)
    def _settled(self, message: Settled) -> None:
        self.running = self.applying = False
        hosts = "Every host now runs" if self.several else "The host now runs"
        if message.problem:
            self.applied = f"The winner was not applied: {message.problem}"
        else:
            choice = self.outcome.choice if self.outcome is not None else None
            what = "the winner" if choice is None or choice.clear else "the pick"  # no clear winner: not called one
            self.applied = f"{hosts} {what} ({self.plan.flag} {message.value})."
        self._show_result()

    def _done(self, outcome: SweepOutcome) -> None:
        self.outcome = outcome
        self.running = False
        self._refresh_curves()
        self._show_result()
        winner = outcome.promoted  # the measured winner, unless it failed the correctness gate
        if winner is not None and outcome.left_on == "original":
            if outcome.choice is not None and not outcome.choice.clear:  # a pick within the noise: say so first
                on = f" on {', '.join(self.plan.hosts)}" if self.several else ""
                hosts = "hosts run the units they" if self.several else "host runs the unit it"
                question = (f"Apply --{self.plan.flag} {winner}{on}? It shows {outcome.choice.unclear_words()}; "
                            f"apply anyway?\nThe {hosts} ran before the sweep; yes pushes {winner} and restarts.")
            elif self.several:
                question = (f"Apply the winner --{self.plan.flag} {winner} on {', '.join(self.plan.hosts)}?\n"
                            "The hosts run the units they ran before the sweep; yes pushes the winner to each "
                            "and restarts them.")
            else:
                question = (f"Apply the winner --{self.plan.flag} {winner}?\n"
                            "The host runs the unit it ran before the sweep; yes pushes the winner and restarts.")

            def answer(yes: bool | None) -> None:
                if yes:
                    self.running = self.applying = True
                    self.say(f"applying the winner {winner}…")
                    self.apply_winner_worker(winner, outcome.units_by_host)

            self.app.push_screen(ConfirmScreen(question, yes="Apply"), answer)

    # -- display --------------------------------------------------------------------------------
    def _show_result(self) -> None:
        outcome = self.outcome
        if outcome is None:
            return
        hosts = "The hosts run" if self.several else "The host runs"
        where = {"winner": f"{hosts} the winner ({self.plan.flag} {outcome.winner}).",
                 "original": f"{hosts} the unit{'s they' if self.several else ' it'} ran before the sweep."
                 }.get(outcome.left_on, outcome.left_on)
        lines = [outcome.choice.headline(self.plan.flag) if outcome.choice else "No winner."]
        lines += [f"  - {reason}" for reason in outcome.reasons]
        if outcome.gate is not None:
            from specdec_tui.loop.correctness_gate import verdict_lines

            lines += verdict_lines(outcome.gate)
        if outcome.stopped:
            lines.append(f"Stopped early: {outcome.stopped}")
        if self.several:
            lines.append("Ran: " + ", ".join(f"{v} on {h}" for v, h in outcome.host_of_value.items()))
        lines += [f"{host} failed: {reason}" for host, reason in outcome.host_failures.items()]
        lines.append(self.applied or where)
        self.show_result("\n".join(lines))
        warnings = trials_sweep_warnings(t for trials in outcome.trials_by_value.values() for t in trials)
        if warnings:  # the settings the trials really ran with
            box = self.query_one("#sweep-warnings", Static)
            box.update(_warning_text(warnings))
            box.set_class(False, "-empty")

    def _set_status(self, value: str, status: str) -> None:
        self.status_by_value[value] = status
        self._update_row(value)

    def _points(self) -> dict[str, CurvePoint]:
        return {p.value: p for p in curve(self.trials_by_value)}

    def _update_row(self, value: str, point: CurvePoint | None = None) -> None:
        table = self.query_one("#sweep-values-table", DataTable)
        point = point or self._points().get(value)
        for (key, _), cell in zip(ROW_COLUMNS, self._cells(value, point), strict=True):
            table.update_cell(value, key, cell, update_width=True)

    def _cells(self, value: str, point: CurvePoint | None) -> list[Text]:
        status = self.status_by_value.get(value, "pending")
        style = rich_style(status_tone(status), bold=True)
        choice = self.outcome.choice if self.outcome is not None else None
        if choice is not None and (mark := choice.mark(value)):  # ★ only when the intervals separate (issue 33)
            status, style = f"{status} {mark}", rich_style(Tone.GOOD, bold=True) if choice.clear else "yellow"
        runs = f"{point.ok}/{point.failed}" if point else MISSING
        return [Text(value, justify="right"), Text(runs, justify="right"),
                Text(fmt_num(point.low_c_tok_s) if point else MISSING, justify="right"),
                Text(fmt_num(point.per_request_tok_s) if point else MISSING, justify="right"),
                Text(fmt_int(point.max_running_requests) if point else MISSING, justify="right"),
                Text(fmt_num(point.high_c_tok_s) if point else MISSING, justify="right"), Text(status, style=style)]

    def _refresh_curves(self) -> None:
        points = self._points()
        for value in self.plan.values:
            self._update_row(value, points.get(value))
        ordered = [points[v] for v in self.plan.values if v in points]
        self.query_one("#curve-tok", CurvePlot).set_points(
            [(p.value, p.low_c_tok_s) for p in ordered if p.low_c_tok_s is not None])
        self.query_one("#curve-mrr", CurvePlot).set_points(
            [(p.value, float(p.max_running_requests)) for p in ordered if p.max_running_requests is not None])

    def cell_text(self, value: str, column: str) -> str:
        return cell_plain(self.query_one("#sweep-values-table", DataTable), value, column)


def _warning_text(warnings: Sequence[str]) -> str:
    return "\n".join(f"⚠ {w}" for w in warnings)
