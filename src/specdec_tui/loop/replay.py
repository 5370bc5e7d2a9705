"""Replay a saved session: run every trial's unit again, byte for byte, with its own benchmark profile, and
record the new figures beside the old ones with their drift.

Why: a figure measured last week (another driver, another SGLang build, a neighbour on the GPUs) is a
claim; replaying it says whether it still holds. The host ends on the unit it ran before the replay
(also after a cancel or a failure) unless asked to keep the best replayed trial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from specdec_tui.core.compare import delta_pct, trial_label
from specdec_tui.core.confidence import Verdict, compare_samples
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.sweep_rules import Objective, score
from specdec_tui.loop.events import Phase
from specdec_tui.loop.states import Busy
from specdec_tui.loop.sweep import UnitGuard, settle_quietly
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError

EventSink = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class ReplayStarted:
    original: Trial
    index: int  # 0-based
    total: int


@dataclass(slots=True)
class ReplayPair:
    """An old trial and its re-run; drift is the change of output tok/s per concurrency, in percent."""

    original: Trial
    replay: Trial

    @property
    def drift(self) -> dict[int, float | None]:
        cs = sorted({lv.concurrency for lv in self.original.levels} | {lv.concurrency for lv in self.replay.levels})
        return {c: delta_pct(lv_a.output_tok_s if (lv_a := self.original.level(c)) else None,
                             lv_b.output_tok_s if (lv_b := self.replay.level(c)) else None) for c in cs}

    @property
    def worst_drift(self) -> float | None:
        values = [abs(d) for d in self.drift.values() if d is not None]
        return max(values) if values else None

    @property
    def failed_again(self) -> bool:
        """Both runs failed: nothing was measured, so there are no figures that could have been reproduced."""
        return self.original.status == "failed" and self.replay.status == "failed"

    def verdict(self, tolerance_pct: float) -> str:
        """In words: "within ±10%", "drifted", "failed again" or "was failed, now ok"."""
        if self.failed_again:
            same = (self.original.failure or "").split(":")[0] == (self.replay.failure or "").split(":")[0]
            return "failed again" + ("" if same else " (at another step)")
        if self.original.status != self.replay.status:
            return f"was {self.original.status}, now {self.replay.status}"
        return f"within ±{tolerance_pct:g}%" if self.within(tolerance_pct) else "drifted"

    def confidence(self) -> Verdict | None:
        """Then against now at the lowest concurrency both measured, with 95 % intervals over requests: whether the
        drift is told apart from the benchmark's noise (None: no level in common)."""
        common = sorted({lv.concurrency for lv in self.original.levels} & {lv.concurrency for lv in self.replay.levels})
        if not common:
            return None
        a, b = self.original.level(common[0]), self.replay.level(common[0])
        return compare_samples(f"c={common[0]} per-request tok/s", "then", a.tok_s_samples if a else [],
                               "now", b.tok_s_samples if b else [], unit=" tok/s")

    def confidence_line(self) -> str:
        """"trial 3 → 7: c=1 per-request tok/s then … vs now … (over requests): no clear difference …" or ""."""
        v = self.confidence()
        return f"trial {self.original.id} → {self.replay.id}: {v.text}" if v is not None else ""

    def within(self, tolerance_pct: float) -> bool:
        """Same status and every concurrency within ±tolerance (a failed trial reproduces by failing again)."""
        if self.original.status != self.replay.status:
            return False
        worst = self.worst_drift
        return worst is None or worst <= tolerance_pct


@dataclass(slots=True)
class ReplayOutcome:
    pairs: list[ReplayPair] = field(default_factory=list)
    kept: Trial | None = None  # with keep_best: the replayed trial the host was left on
    left_on: str = ""  # "original", "best" or a sentence saying what went wrong


@dataclass(frozen=True, slots=True)
class ReplayDone:
    outcome: ReplayOutcome


def replayable(session: Session, trial_ids: Sequence[int] | None = None) -> list[Trial]:
    """The trials to run again: those asked for, else every trial that is not itself a replay."""
    if trial_ids:
        missing = [i for i in trial_ids if session.trial(i) is None]
        if missing:
            raise WorkflowError(f"the session has no trial {', '.join(map(str, missing))}; "
                                f"it has {', '.join(str(t.id) for t in session.trials) or 'none'}")
        return [t for i in trial_ids if (t := session.trial(i)) is not None]
    return [t for t in session.trials if t.replay_of is None and t.unit_text]


async def _replay_one(runner: TrialLoop, old: Trial, emit: EventSink) -> Trial:
    tagged = False

    def tag_then_emit(event: object) -> None:
        nonlocal tagged
        if not tagged and isinstance(event, Phase) and event.name == "push":
            _tag(runner.session.trials[-1], old)
            tagged = True
        emit(event)

    try:
        trial = await runner.run_trial(old.unit_text, profile=old.profile, on_event=tag_then_emit)
    except WorkflowError as err:  # the validator has grown stricter since: record why it was not run
        trial = runner.start_trial(old.unit_text, profile=old.profile)
        trial.status, trial.failure = "failed", f"not pushed: {err}"
    _tag(trial, old)
    runner.record(trial)
    return trial


def _tag(trial: Trial, old: Trial) -> None:
    trial.replay_of = old.id
    trial.sweep = dict(old.sweep)
    trial.label = f"replay of {trial_label(old)}"


async def replay_session(runner: TrialLoop, session: Session, *, keep_best: bool = False,
                         trial_ids: Sequence[int] | None = None, objective: Objective = Objective(),
                         on_event: EventSink | None = None) -> ReplayOutcome:
    """Replay `session`'s trials on the runner's host; the new trials go into `runner.session` (pass the
    same session to keep them beside the old ones). `keep_best` leaves the host on the replayed trial
    that scores best under `objective`; otherwise the unit running before is restored byte-identical."""
    emit = on_event or (lambda _event: None)
    with runner.task(Busy.REPLAY):
        todo = replayable(session, trial_ids)
        outcome = ReplayOutcome()
        async with UnitGuard(runner, emit, "replay") as guard:
            for index, old in enumerate(todo):
                emit(ReplayStarted(old, index, len(todo)))
                outcome.pairs.append(ReplayPair(old, await _replay_one(runner, old, emit)))
            scored = [(s, p.replay) for p in outcome.pairs if (s := score(p.replay, objective)) is not None]
            best = max(scored, key=lambda pair: pair[0])[1] if scored else None
            if keep_best and best is not None:
                problem = await settle_quietly(runner, best.unit_text, emit, f"keeping the best replayed trial {best.id}")
                outcome.kept, outcome.left_on = best, problem or "best"
            else:
                outcome.left_on = await guard.restore() or "original"
        emit(ReplayDone(outcome))
        return outcome
