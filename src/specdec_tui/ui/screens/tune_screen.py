"""The Tune screen: the operator names the space, the SLO and the budget (and, with several hosts in the config,
the hosts: the panel's own first, the others identical to it — the parallel sweep's rules and refusals, in
`loop.tune_host`); the tuner searches and the screen shows it live — launches used of the budget, the incumbent
and its margin to the SLO, every launch's levels (a level that misses the SLO marked ✗, a failed start with its
kind) and a chart of tok/s by steps/topk/draft per level (`widgets/tune_chart.py`, failures ×), the next
candidate and why, time left — and ends with the choice, its confidence, the schedule, whether the adaptive tiers
held and were shipped, and `a` to push it on every tuned host (the panel's by the ordinary push, so `u` rolls
back as always; the others each by its own edit, `loop.tune_host.push_choice`).

The worker only posts `ui.tune_messages`; each is handled here with `@on`. The loop owns the intents (the tune
holds the trial loop busy, restores the unit on cancel); escape cancels a running tune, then closes.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from specdec_tui.core.config import Config
from specdec_tui.core.number_format import fmt_count
from specdec_tui.core.progress import eta_words
from specdec_tui.core.tune_objective import LaunchResult, Point, Slo, meets, point_label
from specdec_tui.core.words import in_words
from specdec_tui.loop.states import Busy
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.tune import DEFAULT_BUDGET, TuneOutcome, TunePlan
from specdec_tui.loop.tune_form import form_hosts, parse_form
from specdec_tui.loop.tune_search import Standing
from specdec_tui.loop.unit_checks import WorkflowError
from specdec_tui.ui.tune_messages import (
    TuneAdaptiveChecked,
    TuneBegan,
    TuneFinished,
    TuneLanded,
    TuneLaunching,
    TuneLevel,
    TuneOthersPushed,
    TuneStep,
    TuneStopped,
    tune_message,
)
from specdec_tui.ui.widgets.tune_chart import TuneChart, axis_title, config_label, ordered_flags

if TYPE_CHECKING:
    from specdec_tui.loop.host_group import OtherHosts

DEFAULT_SPACE = "speculative-num-steps=0,1,2,3,4,5"
DEFAULT_SLO = "ttft_p99=2s"


class TuneScreen(Screen[object]):
    """Tunes the host of `runner`; dismisses with the unit to push (after `a`) or None."""

    TASK = "tune"
    BINDINGS = [
        Binding("escape", "close", "Cancel / back", id="tune-close"),
        Binding("a", "apply", "Push the choice", id="tune-apply"),
    ]
    DEFAULT_CSS = """
    TuneScreen #tune-title { padding: 0 1; text-style: bold; height: auto; }
    TuneScreen #tune-form { height: 3; }
    TuneScreen #tune-form Input { width: 1fr; padding: 0 1; }
    /* the search space is the longest text: the default whole at 80 columns, also beside the hosts field (a third
       of the row cut it); the SLO's default whole there too */
    TuneScreen #tune-form #tune-space { width: 2fr; min-width: 38; }
    TuneScreen #tune-form #tune-budget { width: 12; }
    TuneScreen #tune-form #tune-hosts { width: 1fr; }
    TuneScreen #tune-status, TuneScreen #tune-next, TuneScreen #tune-best { padding: 0 1; height: auto; }
    TuneScreen #tune-body { height: 1fr; }
    TuneScreen #tune-surface { height: 1fr; width: auto; max-width: 75%; }
    TuneScreen #tune-chart { width: 1fr; min-width: 20; }
    TuneScreen #tune-result { padding: 0 1; height: auto; max-height: 8; }
    """

    def __init__(self, runner: TrialLoop, *, space: str = DEFAULT_SPACE, slo: str = DEFAULT_SLO,
                 budget: int = DEFAULT_BUDGET, config: Config | None = None) -> None:
        super().__init__()
        self.runner = runner
        self.config = config  # where the other hosts are found; None: the panel's own host only
        self.configured = sorted(config.hosts) if config is not None else []
        self.hosts: tuple[str, ...] = (runner.host.info.name,)
        self.defaults = (space, slo, str(budget))
        self.running = self.pushing = False  # pushing: `a` puts the choice on the other hosts (escape waits for it)
        self.cancelling = False  # escape was pressed: the tune is putting back the unit that ran before
        self.plan: TunePlan | None = None
        self.outcome: TuneOutcome | None = None
        self.base_text = ""
        self.bases: dict[str, str] = {}  # each other host's unit when the tune began (its `a` edits that one)
        self.others: OtherHosts | None = None  # their connections: kept for `a`, closed when the screen goes
        self.started = time.monotonic()
        self.launches = 0
        self.rows = 0
        self.results: list[LaunchResult] = []
        self.in_launch = False  # between a launch's start and its landing
        self.planned: dict[int, int] = {}  # the running benchmark's requests planned, by level

    def compose(self) -> ComposeResult:
        levels = ",".join(map(str, self.runner.profile.concurrency))
        yield Static(f"Tune {self.runner.host.info.name}: tok/s at levels c={levels} (the profile's); enter starts",
                     id="tune-title", markup=False)
        space, slo, budget = self.defaults
        with Horizontal(id="tune-form"):
            for value, name, hint, title in ((space, "space", "FLAG=V1,V2; FLAG=…", "flags to search"),
                                              (slo, "slo", "ttft_p99=2s itl_p99=50ms", "SLO"),
                                              (budget, "budget", "launches", "budget")):
                field = Input(value, id=f"tune-{name}", placeholder=hint)
                field.border_title = title  # the fields are unnamed otherwise: "24" alone says nothing
                yield field
            if len(self.configured) > 1:  # identical hosts may share the launches
                field = Input("", id="tune-hosts", placeholder=self.runner.host.info.name)
                field.border_title = "hosts"
                yield field
        yield Static("", id="tune-status", markup=False)
        yield Static("", id="tune-best", markup=False)
        yield Static("", id="tune-next", markup=False)
        table: DataTable[str] = DataTable(id="tune-surface", cursor_type="none", zebra_stripes=True)
        self._head(table, "configuration")
        with Horizontal(id="tune-body"):
            yield table
            yield TuneChart(id="tune-chart")
        yield Static("", id="tune-result", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#tune-space", Input).focus()

    def _say(self, widget: str, text: str) -> None:
        self.query_one(f"#tune-{widget}", Static).update(text)

    # ------------------------------------------------------------------ starting

    @on(Input.Submitted)
    def _start(self) -> None:
        if self.running or self.outcome is not None:
            return
        space, slo, budget = (self.query_one(f"#tune-{n}", Input).value for n in ("space", "slo", "budget"))
        hosts = self.query_one("#tune-hosts", Input).value if self.query("#tune-hosts") else ""
        try:
            self.plan = parse_form(space, slo, budget, self.runner.profile.concurrency)
            if self.configured:
                self.hosts = form_hosts(hosts, self.configured, self.runner.host.info.name)
        except (ValueError, WorkflowError) as err:
            return self._say("status", f"Cannot start: {err}")
        why = self.runner.refusal(Busy.TUNE)
        if why is not None:
            return self._say("status", why)
        for widget in self.query("#tune-form Input").results(Input):
            widget.disabled = True
        self.running, self.started = True, time.monotonic()
        on = f" on {', '.join(self.hosts)} at once" if len(self.hosts) > 1 else ""
        self._say("status", f"starting{on}: {self.plan.slo.words()}, at most {fmt_count(self.plan.budget, 'launch', 'launches')}")
        self._run(self.plan)

    @work(group="tune", exclusive=True)
    async def _run(self, plan: TunePlan) -> None:
        from specdec_tui.hosts.errors import HostError
        from specdec_tui.loop.health import NotHealthy
        from specdec_tui.loop.host_group import OtherHosts, with_host
        from specdec_tui.loop.tune_host import run_host_tune

        path = self.runner.session_path
        others = self.others = OtherHosts()
        done = False
        try:
            # the loop held from the first step, before a host is read: claimed only once every host's unit was read
            # (SSH round trips, longer on a loaded machine), b and p still went through while the screen said "starting"
            with self.runner.task(Busy.TUNE):
                self.base_text = await self.runner.read_running()
                loops = [self.runner]
                if len(self.hosts) > 1 and self.config is not None:
                    loops += await others.open(self.config, self.hosts[1:], self.runner)
                    self.bases = {loop.host.info.name: await loop.read_running() for loop in loops[1:]}
                outcome = await run_host_tune(loops, plan, on_event=self._post,
                                              adaptive_file=path.with_suffix(".adaptive.json") if path else None,
                                              correctness_gate=True)  # as the CLI: a choice that garbles is not offered
        except asyncio.CancelledError:
            self.post_message(TuneStopped("cancelled; the unit that ran before is back", cancelled=True))
            raise
        except (WorkflowError, HostError, NotHealthy) as err:  # Refused too: the loop claimed since the form's check
            self.post_message(TuneStopped(with_host(err, in_words(err))))
            return
        else:
            done = True
        finally:
            if not done:
                await others.close()  # the other hosts' connections (kept for `a` after a tune that ended)
        self.post_message(TuneFinished(outcome))

    def _post(self, event: object) -> None:
        """Loop events → this screen's messages (called on the worker's loop; posting is all it does)."""
        message = tune_message(event)
        if message is not None:
            self.post_message(message)

    # ------------------------------------------------------------------ the search, live

    @on(TuneBegan)
    def _began(self, message: TuneBegan) -> None:
        e = message.event
        self.launches = e.resumed
        resumed = f", {e.resumed} launch(es) resumed from the session" if e.resumed else ""
        self._say("status", f"{e.candidates} configurations, {len(e.refused)} refused by the release's rules"
                            f"{resumed}; budget {fmt_count(e.budget, 'launch', 'launches')}")
        for result in e.prior:  # an interrupted tune's launches, not repeated: shown as if they had just landed
            self._show_result(result, e.standing)

    @on(TuneLaunching)
    def _launching(self, message: TuneLaunching) -> None:
        e = message.event
        self.in_launch = True
        again = " (again: within the noise of the best)" if e.repeat else ""
        on = f" on {e.host}" if len(self.hosts) > 1 else ""
        self._say("next", f"next{on}: {e.candidate.label}{again} — {e.why}")
        eta = eta_words(self.launches, e.budget, time.monotonic() - self.started)
        self._say("status", f"launch {e.number} of at most {e.budget}" + (f" · {eta}" if eta else ""))

    @on(TuneStep)
    def _step(self, message: TuneStep) -> None:
        """A launch's step under its number; the tune's own (the gate, the restore) alone: "launch 2: gate" came
        after a one-launch budget was spent."""
        self._say("status", f"launch {self.launches + 1}: {message.words}" if self.in_launch else message.words)

    @on(TuneLevel)
    def _level(self, message: TuneLevel) -> None:
        """`bench c=16 9/16` while a launch measures (the sweep's rows say the same)."""
        if message.planned is not None:
            self.planned[message.concurrency] = message.planned
        planned = self.planned.get(message.concurrency, 0)
        done = "" if message.done is None else f" {message.done}" + (f"/{planned}" if planned else "")
        self._say("status", f"launch {self.launches + 1}: {message.host}bench c={message.concurrency}{done}")

    @on(TuneLanded)
    def _landed(self, message: TuneLanded) -> None:
        e = message.event
        self.launches, self.in_launch = e.launches, False
        self._show_result(e.result, e.standing)
        if e.spared:
            self._say("next", f"predicted to fail, not launched: {', '.join(c.label for c in e.spared)}")

    def _show_result(self, result: LaunchResult, standing: Standing | None) -> None:
        """A launch in the table and the chart, and the best after it."""
        self.results.append(result)
        self._add_row(result)
        if self.plan is not None:
            self.query_one("#tune-chart", TuneChart).show(self.results, self.plan.levels, self.plan.slo)
        if standing is not None and self.plan is not None:
            s = standing
            self._say("best", f"best: {point_label(s.point)} {s.goodput:,.0f} tok/s at c={s.level} "
                              f"({self._margin(result if result.point == s.point else None)}); {s.confidence}")
        elif self.plan is not None:  # the chart plots levels under the SLO only: it stays empty, say why
            self._say("best", f"best: none yet: no level of any launch meets {self.plan.slo.words()}")

    def _margin(self, result: LaunchResult | None) -> str:
        """The incumbent's room under the SLO at its best level, when this launch is the incumbent."""
        slo: Slo = self.plan.slo if self.plan else Slo()
        if result is None or slo.ttft_p99_ms is None:
            return slo.words()
        levels = [lv for lv in result.levels if meets(lv, slo) and lv.ttft_p99_ms is not None]
        if not levels:
            return slo.words()
        best = max(levels, key=lambda lv: lv.tok_s)
        assert best.ttft_p99_ms is not None
        return f"TTFT p99 {best.ttft_p99_ms:,.0f} of {slo.ttft_p99_ms:,.0f} ms"

    def _head(self, table: DataTable[str], config: str) -> None:
        """The table's columns: tok/s per level under "c=N" (the title says tok/s), so four levels and the chart
        fit 80 columns (they were cut at "c=16 to")."""
        table.clear(columns=True)
        table.add_column("#", key="n")
        table.add_column(config, key="config")
        for c in self.runner.profile.concurrency:
            table.add_column(f"c={c}", key=f"c{c}")

    def _add_row(self, r: LaunchResult) -> None:
        """A launch's row: its configuration as the chart's axis names it (`3/2/8` under "steps/topk/draft")."""
        table: DataTable[str] = self.query_one("#tune-surface", DataTable)
        flags = ordered_flags(self.plan.space if self.plan else (k for k, _ in r.point))
        if self.rows == 0:
            self._head(table, axis_title(flags))
        self.rows += 1
        on = f"{r.host}: " if len(self.hosts) > 1 and r.host else ""
        label = config_label(r.point, flags) if {k for k, _ in r.point} <= set(flags) else point_label(r.point)
        cells = [str(self.rows), on + label]
        slo = self.plan.slo if self.plan else Slo()
        for c in self.runner.profile.concurrency:
            lv = r.level(c)
            if r.failed:
                cells.append(f"× {r.failure_kind.value if r.failure_kind else 'start'}" if c ==
                             self.runner.profile.concurrency[0] else "")
            elif lv is None:
                cells.append("–")
            else:
                cells.append(f"{lv.tok_s:,.0f}" + ("" if meets(lv, slo) else " ✗"))
        table.add_row(*cells)

    @on(TuneAdaptiveChecked)
    def _adaptive(self, message: TuneAdaptiveChecked) -> None:
        self._say("next", f"adaptive check: {message.event.words()}")

    # ------------------------------------------------------------------ the end

    @on(TuneFinished)
    def _finished(self, message: TuneFinished) -> None:
        self.running, self.outcome = False, message.outcome
        if str(self.query_one("#tune-next", Static).render()).startswith("next"):
            self._say("next", "")  # the search has ended: nothing is next ("adaptive check: …" stays)
        o = message.outcome
        self._say("status", f"done: {fmt_count(o.launches, 'launch', 'launches')} ({o.resumed} resumed), {len(o.failed)} failed to start, "
                            f"{o.retried_failures} relaunched; {o.stopped}")
        lines = []
        if o.standing is None:
            lines.append("No configuration met the SLO at any level. Press escape to go back.")
        else:
            lines.append(f"Choice: {point_label(o.standing.point)}, {o.standing.goodput:,.0f} tok/s at "
                         f"c={o.standing.level}. Confidence {o.standing.confidence}.")
            lines.append("Schedule: " + "; ".join(
                f"c={c.concurrency}: {point_label(c.point) if c.point else 'none meets the SLO'}" for c in o.schedule))
            if o.adaptive_check is not None:
                lines.append(f"Adaptive check: {o.adaptive_check.words()}")
            shipped = "; ".join(f"{name}: {where}" for name, where in o.adaptive_shipped.items())
            if shipped:
                lines.append(f"Adaptive tiers shipped beside the unit ({shipped}).")
            elif o.adaptive_note:
                lines.append(f"Adaptive tiers: {o.adaptive_note}.")
            elif o.adaptive_file is not None and o.adaptive_check is None:
                lines.append(f"Adaptive tiers (not checked): {o.adaptive_file}")
            if o.gate is not None:
                from specdec_tui.loop.correctness_gate import verdict_lines

                lines += verdict_lines(o.gate)
            where = f" on {', '.join(self.hosts)}" if len(self.hosts) > 1 else ""
            lines.append(f"a pushes the choice{where} (u rolls back), escape goes back." if o.promoted is not None
                         else "Nothing to push: the choice failed the correctness gate. Press escape to go back.")
        self._say("result", "\n".join(lines))

    @on(TuneStopped)
    def _stopped(self, message: TuneStopped) -> None:
        self.running = False
        self._say("next", "")  # "next: steps=0 — could reach …" after a cancel named a launch that will not come
        self._say("status", f"The tune stopped: {message.reason}")
        self._say("result", "Its launches so far are in the session (the same tune resumes from them). "
                            "Press escape to go back.")

    def action_apply(self) -> None:
        o = self.outcome
        if self.running or o is None or o.best is None:
            return self._say("status", "Nothing to push yet: the tune has not chosen a configuration.")
        if o.promoted is None:
            return self._say("status", "Not pushed: the choice failed the correctness gate (see above).")
        if self.others is not None and self.others.loops:
            if not self.pushing:  # a second a would cancel the first push half-way
                self.pushing = True
                self._say("status", f"pushing the choice on {', '.join(self.hosts[1:])} too…")
                self._push_others(o.promoted)
            return
        self._dismiss_with_choice()

    def _dismiss_with_choice(self) -> None:
        """The panel's own host takes the choice as any push (the app pushes it, `u` rolls back)."""
        from specdec_tui.loop.tune_space import unit_for

        if self.outcome is not None and self.outcome.promoted is not None:
            self.dismiss(unit_for(self.base_text, dict(self.outcome.promoted)))

    @work(group="tune-apply", exclusive=True)
    async def _push_others(self, promoted: Point) -> None:
        from specdec_tui.loop.tune_host import push_choice

        loops = self.others.loops if self.others is not None else []  # the panel's host held meanwhile: keys wait
        self.post_message(TuneOthersPushed(await push_choice(loops, self.bases, promoted, holding=self.runner)))

    @on(TuneOthersPushed)
    def _others_pushed(self, message: TuneOthersPushed) -> None:
        if message.problems:
            self.notify("The tune's choice is not on every host: " + "; ".join(message.problems),
                        title="Not pushed everywhere", severity="warning", timeout=20)
        self._dismiss_with_choice()

    async def on_unmount(self) -> None:
        if self.others is not None:
            await self.others.close()  # the other hosts' connections; the panel's own host stays open

    def action_close(self) -> None:
        if self.pushing:  # a cancel would leave a host half-restarted, its connection closed under it
            return self._say("status", f"pushing the choice on {', '.join(self.hosts[1:])}: wait until it runs there…")
        if self.running:
            self.cancelling = True
            self._say("status", "cancelling: the tune puts back the unit that ran before…")
            self.workers.cancel_group(self, self.TASK)
            return
        self.dismiss(None)
