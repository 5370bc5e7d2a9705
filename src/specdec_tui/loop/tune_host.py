"""The tuner on real hosts: each launch is a trial of the host's session (push → restart → healthy → every
level), tagged with the tune and the point as it lands, so an interrupted tune resumes from the session; several
hosts must run the same server but for the tuned flags (the parallel sweep's rule, `parallel_sweep.unit_difference`)
and each is put back on the unit it ran before when the tune ends, fails or is cancelled (`sweep.UnitGuard`).
That unit is recorded in the tag of each of the tune's trials ("before"), so a tune resumed after a kill (which
can leave the host on a launch's unit) still ends on the unit from before the tune started, not on that launch's.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from specdec_tui.core.redact import redact_text, restore_secrets
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.tune_objective import (
    FailureKind,
    LaunchResult,
    LevelFigures,
    Point,
    failure_kind,
    point_label,
    point_of,
)
from specdec_tui.core.words import in_words
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.events import Phase
from specdec_tui.loop.health import NotHealthy
from specdec_tui.loop.parallel_sweep import UnitsDiffer, unit_difference
from specdec_tui.loop.same_server import SameServer, refuse_same_server
from specdec_tui.loop.schedule_gate import gate_schedule
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep import UnitGuard, settle_unit
from specdec_tui.loop.sweep_plan import OnHost
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.tune import AdaptiveCheckStarted, EventSink, TuneOutcome, TunePlan, run_tune
from specdec_tui.loop.tune_adaptive import (
    adaptive_candidate,
    adaptive_unit,
    check_file,
    judge,
    release_supports_adaptive,
    shipped_file,
    tiers_json,
    write_tiers,
)
from specdec_tui.loop.tune_space import STEPS, Candidate, SpaceError, candidates, unit_for

TAG = "tune"


def tune_id(plan: TunePlan, profile_name: str) -> str:
    """Names one tune in the session: same space, levels and profile → same tune (the SLO may change: the
    measurements do not depend on it)."""
    text = repr((sorted((k, tuple(v)) for k, v in plan.space.items()), plan.levels, profile_name))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def result_of(trial: Trial, point: Point) -> LaunchResult:
    """What a finished trial tells the tuner."""
    levels = tuple(LevelFigures(lv.concurrency, lv.output_tok_s, lv.ttft_ms.p99, lv.itl_ms.p99,
                                lv.accept_length_server, lv.errors) for lv in trial.levels)
    mrr = trial.facts.max_running_requests if trial.facts else None
    if trial.status == "ok":
        return LaunchResult(point, levels, mrr, trial_id=trial.id, host=trial.host)
    failure = trial.failure or "it did not start"
    kind = failure_kind(f"{failure} {trial.notes}") if trial.facts is None else FailureKind.OTHER
    return LaunchResult(point, levels, mrr, failure=failure, failure_kind=kind, trial_id=trial.id, host=trial.host)


def resumed(session: Session, tid: str) -> list[LaunchResult]:
    """The tune's launches already in the session that finished (ok, or failed to start or under the benchmark);
    a launch cut short (running, cancelled) is not one: it is launched again."""
    out = []
    for trial in session.trials:
        tag = trial.sweep.get(TAG) if trial.sweep else None
        if not isinstance(tag, dict) or tag.get("id") != tid or trial.status not in ("ok", "failed"):
            continue
        point = tag.get("point")
        if isinstance(point, dict):
            out.append(result_of(trial, point_of({str(k): str(v) for k, v in point.items()})))
    return out


@dataclass(frozen=True, slots=True)
class Before:
    """The unit a host ran before the tune started, and whether it was running."""

    text: str
    running: bool


def recorded_before(session: Session, tid: str, host: str) -> Before | None:
    """The unit `host` ran before tune `tid` first launched on it, as its first trial's tag recorded it."""
    for trial in session.trials:
        tag = trial.sweep.get(TAG) if trial.sweep else None
        if isinstance(tag, dict) and tag.get("id") == tid and trial.host == host:
            text = tag.get("before")
            if isinstance(text, str) and text:
                return Before(text, bool(tag.get("before_running", True)))
    return None


def _resumable(session: Session, tid: str, host: str, found: str) -> Before | None:
    """The recorded unit to end on, when `host` runs one of tune `tid`'s launches (or that unit): a kill left it
    there. A unit the operator changed since is theirs, and the tune starts from it. The session masks keys, so
    the recorded unit gets them back from the host's (`core.redact.restore_secrets`)."""
    before = recorded_before(session, tid, host)
    if before is None:
        return None
    shown = redact_text(found)
    launched = {redact_text(t.unit_text) for t in session.trials
                if t.host == host and t.sweep and isinstance(t.sweep.get(TAG), dict) and t.sweep[TAG].get("id") == tid}
    if shown != redact_text(before.text) and shown not in launched:
        return None
    return Before(restore_secrets(before.text, found), before.running)


@dataclass(slots=True)
class HostLauncher:
    """Launches candidates on one host through its trial loop; each host edits its own unit (its own port)."""

    runner: TrialLoop
    base_text: str
    tid: str
    emit: EventSink
    several: bool
    before: Before

    @property
    def name(self) -> str:
        return self.runner.host.info.name

    async def launch(self, candidate: Candidate, why: str) -> LaunchResult:
        return await self.launch_text(own_unit(self.base_text, candidate), candidate.point)

    async def launch_text(self, text: str, point: Point) -> LaunchResult:
        """One launch of `text`, recorded as the tune's trial for `point` from its push on."""
        name = self.name
        step_emit = _on_host(self.emit, name) if self.several else self.emit
        tag = {"id": self.tid, "point": dict(point), "before": self.before.text,
               "before_running": self.before.running}
        runner = self.runner

        def tag_then_emit(event: object) -> None:
            if isinstance(event, Phase) and event.name == "push" and runner.trial is not None:
                runner.trial.sweep = {TAG: tag}  # on record from its push: a kill mid-launch leaves it tagged
                runner.trial.label = point_label(point)
            step_emit(event)

        trial = await runner.run_trial(text, on_event=tag_then_emit)
        trial.sweep, trial.label = {TAG: tag}, point_label(point)
        runner.record(trial)
        if trial.facts is None:  # never healthy: make sure the host runs what it ran before
            await settle_unit(runner, self.base_text, step_emit, "back to the unit that ran before the tune",
                              running=self.before.running)
        return result_of(trial, point)


async def _starting_units(runners: Sequence[TrialLoop], tid: str) -> tuple[list[Before | None], list[str]]:
    """Each host's recorded unit to end on (a resumed tune's, else None) and the unit its candidates are made
    from. Refuses, before any launch, units that differ but for --host/--port (`_refuse_names` has refused the
    rest)."""
    names = [r.host.info.name for r in runners]
    found_first = await asyncio.gather(*(_read(r) for r in runners))
    # a resumed tune's hosts may run one of its launches: its base (and the unit it ends on) is the recorded one
    recorded = [_resumable(runners[0].session, tid, name, found)
                for name, found in zip(names, found_first, strict=True)]
    bases = [r.text if r is not None else text for r, text in zip(recorded, found_first, strict=True)]
    for name, base in zip(names[1:], bases[1:], strict=True):
        difference = unit_difference((names[0], bases[0]), (name, base))
        if difference is not None:
            raise UnitsDiffer(f"host {name}'s unit differs from {names[0]}'s in {difference}; a tune on several "
                              "hosts needs units that are the same (but for --host/--port)")
    return recorded, bases


def own_unit(base_text: str, candidate: Candidate) -> str:
    """The candidate on this host's unit (the first host's candidates were made from the first host's unit)."""
    from specdec_tui.loop.tune_space import unit_for

    return unit_for(base_text, dict(candidate.point))


def _refuse_names(runners: Sequence[TrialLoop]) -> None:
    """A host named twice, or two names for one server (they would launch two candidates into one unit at once:
    loop.same_server): refused before any host is claimed or read."""
    names = [r.host.info.name for r in runners]
    if len(set(names)) != len(names):
        raise SpaceError("a host is named twice; give each host once")
    try:
        refuse_same_server([(r.host.info.name, r.host.info) for r in runners])
    except SameServer as err:
        raise SpaceError(str(err)) from None


async def run_host_tune(runners: Sequence[TrialLoop], plan: TunePlan, *, on_event: EventSink | None = None,
                        adaptive_file: Path | None = None, correctness_gate: bool = False) -> TuneOutcome:
    """Tune on every host of `runners` at once (they share one session). Raises SpaceError/UnitsDiffer before
    any launch. Each host ends on the unit it ran before (also on cancel). With `adaptive_file`, a schedule that
    names steps is written there and, where the release has adaptive speculation and the hosts are local (the
    server can read the file), checked by one more launch (`loop.tune_adaptive`).

    Every host is held from before its unit is read to the end (`loop.busy`, `loop.host_hold`): another loop on
    one of them — another panel, another command — is refused meanwhile, in words naming the tune."""
    _refuse_names(runners)
    with ExitStack() as held:
        for runner in runners:
            held.enter_context(runner.task(Busy.TUNE))
        return await _tune_held(runners, plan, on_event=on_event, adaptive_file=adaptive_file,
                                correctness_gate=correctness_gate)


async def _tune_held(runners: Sequence[TrialLoop], plan: TunePlan, *, on_event: EventSink | None,
                     adaptive_file: Path | None, correctness_gate: bool) -> TuneOutcome:
    emit = on_event or (lambda _event: None)
    first = runners[0]
    tid = tune_id(plan, first.profile.name)
    recorded, bases = await _starting_units(runners, tid)
    found, refused = candidates(bases[0], plan.space)
    prior = resumed(first.session, tid)
    several = len(runners) > 1
    async with AsyncExitStack() as stack:
        befores = []
        for runner, before in zip(runners, recorded, strict=True):
            saved = runner.auto_rollback
            runner.auto_rollback = True
            stack.callback(setattr, runner, "auto_rollback", saved)
            step_emit = _on_host(emit, runner.host.info.name) if several else emit
            guard = await stack.enter_async_context(UnitGuard(runner, step_emit, "tune"))
            if before is not None and (before.text, before.running) != (guard.original, guard.was_running):
                guard.original, guard.was_running = before.text, before.running
                step_emit(Phase("resume", "the host runs a launch of the interrupted tune; it will end on the unit "
                                          "recorded in the session when the tune started"))
            befores.append(Before(guard.original, guard.was_running))
            stack.push_async_callback(_restore, guard)
        launchers = [HostLauncher(r, b, tid, emit, several, before)
                     for r, b, before in zip(runners, bases, befores, strict=True)]
        check = adaptive_file is not None and release_supports_adaptive() and STEPS in plan.space
        search_plan = replace(plan, budget=plan.budget - 1) if check and plan.budget > 1 else plan  # kept for it
        outcome = await run_tune(launchers, found, search_plan, refused=refused, prior=prior, on_event=emit)
        outcome.plan = plan
        if correctness_gate:  # before the tiers are written: they must not name a configuration it rejects
            await gate_schedule(first.host, outcome, lambda point: unit_for(bases[0], dict(point)), emit,
                                api_key=first.api_key)
        if adaptive_file is not None and outcome.adaptive is not None and release_supports_adaptive():
            outcome.adaptive_file = write_tiers(outcome.adaptive, adaptive_file)  # the operator's copy
            if check:
                await check_and_ship(launchers, bases[0], outcome, emit)
        return outcome


async def check_and_ship(launchers: Sequence[HostLauncher], base: str, outcome: TuneOutcome, emit: EventSink) -> None:
    """The tiers beside the first host's unit, one launch of the unit running them across every level, judged
    against the schedule (`loop.tune_adaptive.judge`); only when it holds are they shipped beside every host's
    unit. A collapse (or a start that fails) ships nothing."""
    tiers = outcome.adaptive
    assert tiers is not None
    first = launchers[0].runner.host
    if adaptive_unit(base, tiers, "-") is None:
        outcome.adaptive_note = "the schedule's first tier runs no speculation: nothing to check"
        return
    if outcome.launches >= outcome.plan.budget:  # budget 1: the search took it all
        outcome.adaptive_note = "no launch of the budget was left to check the tiers: not shipped"
        return
    data = tiers_json(tiers)
    try:
        path = await first.upload(check_file(first.info.unit), data)
    except HostError as err:
        outcome.adaptive_note = f"the tiers could not be put beside the unit on {first.info.name}: {in_words(err)}"
        return
    text = adaptive_unit(base, tiers, path)
    assert text is not None
    emit(AdaptiveCheckStarted(f"{first.info.name}:{path}"))
    result = await launchers[0].launch_text(text, adaptive_candidate(text).point)
    outcome.launches += 1
    outcome.adaptive_check = judge(result, outcome.schedule)
    emit(outcome.adaptive_check)
    if not outcome.adaptive_check.ok:
        return
    for launcher in launchers:
        host = launcher.runner.host
        try:
            outcome.adaptive_shipped[host.info.name] = await host.upload(shipped_file(host.info.unit), data)
        except HostError as err:
            outcome.adaptive_note = f"the tiers could not be shipped to {host.info.name}: {in_words(err)}"


def _on_host(emit: EventSink, name: str) -> EventSink:
    return lambda event: emit(OnHost(name, event))


async def _restore(guard: UnitGuard) -> None:
    await guard.restore()


async def _read(runner: TrialLoop) -> str:
    try:
        return await runner.read_running()
    except (HostError, NotHealthy) as err:
        raise SpaceError(f"{runner.host.info.name}: its unit could not be read: {in_words(err)}") from None


async def push_choice(runners: Sequence[TrialLoop], bases: dict[str, str], promoted: Point, *,
                      holding: TrialLoop | None = None) -> list[str]:
    """`a` on a tune across several hosts: the choice onto each of `runners` (the panel's own host is pushed by
    the panel, as any push), each as its own edit of the unit it ran when the tune began (`bases`, by host name:
    its own port and paths), through the ordinary push with its check that the host's unit is still that one
    (changed since, by another terminal: nothing is pushed there). At once, each host held as by the tune until it
    runs the choice, and `holding` (the panel's own host, pushed after) with them; the problems in words, one a
    host (`holding` busy: nothing is pushed, said once)."""
    from specdec_tui.loop.busy import Refused
    from specdec_tui.loop.unit_checks import WorkflowError

    async def one(runner: TrialLoop) -> str:
        name = runner.host.info.name
        base = bases.get(name)
        if base is None:
            return f"{name}: its unit was not read when the tune began; nothing pushed"
        try:
            with runner.task(Busy.TUNE):  # held until it runs the choice, as by the tune
                trial = await runner.push_and_restart(unit_for(base, dict(promoted)), expected=base)
        except (Refused, WorkflowError, HostError) as err:
            return f"{name}: {in_words(err)}"
        return f"{name}: {trial.failure}" if trial.status == "failed" else ""

    with ExitStack() as held:
        if holding is not None:
            try:
                held.enter_context(holding.task(Busy.TUNE))
            except Refused as err:
                return [f"nothing pushed: {err}"]
        return [problem for problem in await asyncio.gather(*(one(r) for r in runners)) if problem]
