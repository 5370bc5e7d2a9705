"""An automatic sweep over one flag: for each value push → restart → healthy → benchmark N times, then pick
the winner with the robust rules of `core.sweep_rules` and say why.

Why a restart per value and not per repeat: the repeats measure the benchmark's noise on one server
start, and the seed's trade-off (max_running_requests) is fixed at start. The host always ends on a
known unit: the one running before the sweep, or the winner when asked — also after a cancel.

One engine runs a sweep on one host or on several at once (`loop.parallel_sweep` checks the hosts and
splits the values): each host runs its share of the values with the same per-value code, the stop rule
reads the values in plan order whatever host ran them, and the choice is made once over all of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from specdec_tui.core.compare import short_flag
from specdec_tui.core.flags import canonical_name
from specdec_tui.core.session import Trial
from specdec_tui.core.sweep_rules import (
    choose,
    curve,
    stop_reason,
    summarise,
)
from specdec_tui.core.sweep_runs import next_sweep_id
from specdec_tui.core.words import in_words
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.correctness_gate import gate_quietly
from specdec_tui.loop.events import Phase
from specdec_tui.loop.health import NotHealthy
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep_plan import (
    WORSE,
    EventSink,
    OnHost,
    SweepDone,
    SweepHostFailed,
    SweepOutcome,
    SweepPlan,
    SweepStopped,
    SweepTrialDone,
    SweepValueStarted,
    plan_units,
)
from specdec_tui.loop.task_backups import forget_task_backups, history_now
from specdec_tui.loop.trial import TrialLoop

# ---------------------------------------------------------------------------------------------- host state


async def settle_unit(runner: TrialLoop, text: str, emit: EventSink, why: str, *, running: bool = True) -> None:
    """Leave the host on exactly `text`: push it (byte-identical, unvalidated — it is a unit that ran
    before) when the host has another, then restart and wait healthy; nothing when it already runs it.
    `running=False` (nothing ran before) puts the text back and stops the service instead."""
    current = await runner.host.read_unit()
    is_running = (await runner.host.status()).is_running
    if current == text and is_running == running:
        return
    emit(Phase("restore", why))
    if current != text:
        await runner.host.push(text)
    runner.running_text = text
    if not running:
        await runner.host.stop()
        return
    await runner.restart_healthy()


async def settle_quietly(runner: TrialLoop, text: str, emit: EventSink, why: str, *, running: bool = True) -> str:
    """settle_unit that reports a failure in words instead of raising (used on the way out)."""
    try:
        await settle_unit(runner, text, emit, why, running=running)
        return ""
    except (HostError, NotHealthy) as err:
        return f"could not restore the unit: {err}"


class UnitGuard:
    """`async with UnitGuard(runner, emit, "sweep") as guard:` remembers the unit the host runs now and puts
    it back (byte-identical) when the block raises or is cancelled; `restore()` does it on a normal end."""

    def __init__(self, runner: TrialLoop, emit: EventSink, what: str) -> None:
        self.runner, self.emit, self.what = runner, emit, what
        self.original = ""
        self.was_running = False
        self.backups: list[int] | None = None

    async def __aenter__(self) -> UnitGuard:
        self.original = await self.runner.host.read_unit()
        self.was_running = (await self.runner.host.status()).is_running
        self.backups = await history_now(self.runner.host)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *_exc: object) -> bool:
        # shielded: a second cancel must not leave the host half-restored
        await asyncio.shield(self._settle(stopped=exc_type is not None))
        return False

    async def _settle(self, *, stopped: bool) -> None:
        """Back to the unit that ran before when the block stopped; then the block's own backups dropped, so a
        rollback afterwards targets what it targeted before the task, not a value the task tried."""
        if stopped:
            await settle_quietly(self.runner, self.original, self.emit,
                                 f"{self.what} stopped: restoring the unit that ran before", running=self.was_running)
        await forget_task_backups(self.runner.host, self.original, self.backups)

    async def restore(self) -> str:
        """Back to the unit that ran before; "" when done, else what went wrong in words."""
        return await settle_quietly(self.runner, self.original, self.emit,
                                    f"restoring the unit that ran before the {self.what}", running=self.was_running)


# ---------------------------------------------------------------------------------------------- one value


def _label(plan: SweepPlan, value: str, repeat: int | None = None) -> str:
    """`steps=3`, or `steps=3 #2` for the second of several runs."""
    label = f"{short_flag(canonical_name(plan.flag))}={value}"
    return f"{label} #{repeat}" if repeat is not None and plan.repeats > 1 else label


def _tag(trial: Trial, plan: SweepPlan, value: str, repeat: int) -> None:
    trial.sweep = {"flag": canonical_name(plan.flag), "value": value, "repeat": repeat, "id": plan.sweep_id}
    trial.label = _label(plan, value, repeat)


async def _first_run(runner: TrialLoop, text: str, plan: SweepPlan, value: str, emit: EventSink) -> Trial:
    """push → restart → healthy → bench via the workflow, tagging the trial as soon as it exists."""
    pending = True

    def tag_then_emit(event: object) -> None:
        nonlocal pending
        if pending and isinstance(event, Phase) and event.name == "push" and runner.trial is not None:
            _tag(runner.trial, plan, value, 1)  # run_trial has just started it
            pending = False
        emit(event)

    trial = await runner.run_trial(text, on_event=tag_then_emit)
    _tag(trial, plan, value, 1)
    runner.record(trial)
    return trial


async def _repeat_run(runner: TrialLoop, first: Trial, plan: SweepPlan, value: str, repeat: int,
                      emit: EventSink) -> Trial:
    """Another benchmark on the same server start (no push, no restart): a trial of its own."""
    trial = runner.start_trial(first.unit_text, profile=first.profile)
    _tag(trial, plan, value, repeat)
    trial.facts, trial.pushed_at = first.facts, first.pushed_at
    runner.record(trial)
    emit(Phase("bench", f"repeat {repeat} of {plan.repeats}"))
    return await runner.bench(trial, on_event=emit)


async def _run_value(runner: TrialLoop, plan: SweepPlan, value: str, text: str, trials: list[Trial],
                     last_good: str, emit: EventSink, step_emit: EventSink) -> str:
    """One value on one host: one start, `repeats` benchmark runs, each trial appended to `trials` as it ends;
    a start that fails goes back to `last_good`. Returns the unit to go back to after the next failed start."""
    first = await _first_run(runner, text, plan, value, step_emit)
    trials.append(first)
    emit(SweepTrialDone(value, 1, first))
    if first.facts is None:  # never got healthy: the workflow rolled back; make sure it is last_good
        await settle_unit(runner, last_good, step_emit, "back to the last unit that started")
        return last_good
    if first.status != "ok":  # a benchmark that broke the server is not repeated
        return last_good
    for repeat in range(2, plan.repeats + 1):
        trial = await _repeat_run(runner, first, plan, value, repeat, step_emit)
        trials.append(trial)
        emit(SweepTrialDone(value, repeat, trial))
    return text


# ---------------------------------------------------------------------------------------------- the sweep


@dataclass(slots=True)
class SweepHost:
    """One host's part in a sweep: its trial loop, its unit for every value (edits of the unit it runs now)
    and its share of the values, in plan order."""

    runner: TrialLoop
    units: dict[str, str]
    values: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.runner.host.info.name


def _stop(plan: SweepPlan, trials_by_value: dict[str, list[Trial]]) -> str | None:
    history = summarise(trials_by_value, plan.objective)
    reason = stop_reason(history, min_running_requests=plan.min_running_requests)
    if reason == WORSE and not plan.stop_after_worse:
        return None
    return reason


class _Schedule:
    """The plan's values in order: which have finished, and where the stop rule ends the sweep.

    The rule reads the values in plan order, so a value is judged once every value before it has finished,
    whatever host ran it; after a stop no host starts a later value. On one host this is the plain
    "after each value, stop or go on". The choice is made once, when every host is through its share."""

    def __init__(self, plan: SweepPlan, outcome: SweepOutcome, emit: EventSink, hosts: int) -> None:
        self.plan, self.outcome, self.emit = plan, outcome, emit
        self.finished: set[str] = set()
        self.judged = 0  # values[:judged] have been judged by the stop rule
        self.stop_at: int | None = None  # index of the last value that counts
        self.running = hosts
        self.all_done = asyncio.Event()
        self.gated = asyncio.Event()  # the gate has judged the winner (or will not run)

    def may_start(self, value: str) -> bool:
        return self.stop_at is None or self.plan.values.index(value) <= self.stop_at

    def finish(self, value: str) -> None:
        """`value` has all its trials (or never will: its host failed)."""
        self.finished.add(value)
        values = self.plan.values
        while self.judged < len(values) and values[self.judged] in self.finished:
            index, self.judged = self.judged, self.judged + 1
            if self.stop_at is not None:
                continue
            reason = _stop(self.plan, self.counted(index + 1))
            if reason and index < len(values) - 1:
                self.stop_at = index
                self.outcome.stopped = reason
                self.emit(SweepStopped(reason))

    def counted(self, upto: int) -> dict[str, list[Trial]]:
        """The trials of the first `upto` values, in plan order (the order the stop rule and the choice's
        baseline read), whatever order the hosts finished them in."""
        by_value = self.outcome.trials_by_value
        return {v: by_value[v] for v in self.plan.values[:upto] if v in by_value}

    def host_done(self) -> None:
        self.running -= 1
        if self.running == 0:
            self._decide()
            self.all_done.set()

    def _decide(self) -> None:
        outcome, values = self.outcome, self.plan.values
        last = len(values) if self.stop_at is None else self.stop_at + 1
        counted = self.counted(last)
        outcome.past_stop = [v for v in values[last:] if v in outcome.trials_by_value]
        outcome.trials_by_value = self.counted(len(values))
        outcome.host_of_value = {v: outcome.host_of_value[v] for v in values if v in outcome.host_of_value}
        outcome.choice = choose(counted, self.plan.objective)
        outcome.curve = curve(counted)


async def _run_share(h: SweepHost, plan: SweepPlan, outcome: SweepOutcome, schedule: _Schedule, last_good: str,
                     emit: EventSink, step_emit: EventSink) -> None:
    for value in h.values:
        if not schedule.may_start(value):
            return
        outcome.host_of_value[value] = h.name
        emit(SweepValueStarted(value, plan.values.index(value), len(plan.values), _label(plan, value), host=h.name))
        trials = outcome.trials_by_value.setdefault(value, [])
        last_good = await _run_value(h.runner, plan, value, h.units[value], trials, last_good, emit, step_emit)
        schedule.finish(value)


async def _gate(h: SweepHost, plan: SweepPlan, outcome: SweepOutcome, schedule: _Schedule, emit: EventSink, *,
                gating: bool) -> None:
    """On the gating host (the first), once the choice is made: the winner against itself without speculation.
    The guard around it puts the host back (or on the winner, when asked and it passed)."""
    if not gating:
        return
    try:
        await schedule.all_done.wait()
        if plan.correctness_gate and outcome.winner is not None and h.name not in outcome.host_failures:
            emit(Phase("gate", f"correctness gate: {plan.flag} {outcome.winner} against the same unit without "
                               "speculation, temperature 0"))
            outcome.gate = await gate_quietly(h.runner.host, h.units[outcome.winner], api_key=h.runner.api_key)
    finally:
        schedule.gated.set()


async def _run_host(h: SweepHost, plan: SweepPlan, outcome: SweepOutcome, schedule: _Schedule, emit: EventSink,
                    *, several: bool, gating: bool = True) -> None:
    """One host's share, then its end state: back to the unit it ran before, or (asked, once every host is
    through) the winner's unit. On several hosts a host that fails is reported and restored where it can be;
    on one host its error propagates, as a step's would."""
    runner, name = h.runner, h.name
    step_emit: EventSink = (lambda event: emit(OnHost(name, event))) if several else emit
    with runner.task(Busy.SWEEP):
        saved_policy, runner.auto_rollback = runner.auto_rollback, True
        try:
            async with UnitGuard(runner, step_emit, "sweep") as guard:
                try:
                    await _run_share(h, plan, outcome, schedule, guard.original, emit, step_emit)
                except (HostError, NotHealthy) as err:
                    if not several:
                        raise
                    lost = tuple(v for v in h.values if v not in schedule.finished)
                    outcome.host_failures[name] = in_words(err)
                    emit(SweepHostFailed(name, in_words(err), lost))
                    for value in lost:
                        schedule.finish(value)
                finally:
                    schedule.host_done()
                await _gate(h, plan, outcome, schedule, step_emit, gating=gating)
                if plan.apply_best and name not in outcome.host_failures:
                    await schedule.gated.wait()
                    winner = outcome.promoted
                    if winner is not None:
                        problem = await settle_quietly(runner, h.units[winner], step_emit,
                                                       f"leaving the host on the winner {winner}")
                        outcome.left_on_by_host[name] = problem or "winner"
                if name not in outcome.left_on_by_host:  # not asked, no winner, or failed: back to where it was
                    outcome.left_on_by_host[name] = await guard.restore() or "original"
        finally:
            runner.auto_rollback = saved_policy
    try:
        outcome.final_unit_by_host[name] = await runner.host.read_unit()
    except HostError:
        if not several:
            raise
        outcome.final_unit_by_host[name] = ""


def _left_on(outcome: SweepOutcome, hosts: Sequence[SweepHost]) -> str:
    ends = [outcome.left_on_by_host.get(h.name, "") for h in hosts]
    if len(set(ends)) == 1:
        return ends[0]
    return "; ".join(f"{h.name}: {end}" for h, end in zip(hosts, ends, strict=True))


async def sweep_hosts(hosts: Sequence[SweepHost], plan: SweepPlan, *,
                      on_event: EventSink | None = None) -> SweepOutcome:
    """Run `plan` on every host at once, each its share of the values, and choose over all their trials.
    The units and shares are checked by the caller (`run_sweep`, `parallel_sweep.run_parallel_sweep`).
    On cancel every host gets the unit that ran before, then CancelledError propagates."""
    emit = on_event or (lambda _event: None)
    if not plan.sweep_id:  # the hosts share one session (host_group.loops_like)
        plan = replace(plan, sweep_id=next_sweep_id(hosts[0].runner.session.trials))
    outcome = SweepOutcome(plan=plan, unit_by_value=_units_by_value(hosts, plan),
                           units_by_host={h.name: h.units for h in hosts})
    schedule = _Schedule(plan, outcome, emit, len(hosts))
    if len(hosts) == 1:
        await _run_host(hosts[0], plan, outcome, schedule, emit, several=False)
    else:
        try:
            async with asyncio.TaskGroup() as group:
                for h in hosts:
                    group.create_task(_run_host(h, plan, outcome, schedule, emit, several=True,
                                                gating=h is hosts[0]))
        except BaseExceptionGroup as failed:  # not a host failing (those are kept per host): a refusal, a bug
            raise failed.exceptions[0] from None
    outcome.left_on = _left_on(outcome, hosts)
    outcome.final_unit_text = outcome.final_unit_by_host.get(hosts[0].name, "")
    emit(SweepDone(outcome))
    return outcome


def _units_by_value(hosts: Sequence[SweepHost], plan: SweepPlan) -> dict[str, str]:
    """Each value's unit as pushed by the host whose share it is (the first host's when in no share)."""
    owner = {v: h for h in reversed(hosts) for v in h.values}
    return {v: (owner.get(v) or hosts[0]).units[v] for v in plan.values}


async def run_sweep(runner: TrialLoop, base_text: str, plan: SweepPlan, *,
                    on_event: EventSink | None = None) -> SweepOutcome:
    """Sweep `plan.flag` over `plan.values` on one host, editing `base_text`. Failed starts are recorded and
    rolled back to the last good unit; the sweep goes on. Raises SweepError before pushing anything when a
    value's edit is invalid. On cancel the unit that ran before is restored, then CancelledError propagates."""
    units = plan_units(base_text, plan)
    return await sweep_hosts([SweepHost(runner, units, plan.values)], plan, on_event=on_event)
