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


@dataclass(frozen=True, slots=True)
class Reproduction:
    """Whether a replay reproduced its trial and by which rule: per level, then and now by their 95 % intervals
    over requests where both kept enough per-request figures, else (levels saved before intervals, or too few
    requests) the ±tolerance rule."""

    held: bool
    by: str  # "95 % intervals", "±10%", "95 % intervals; ±10% where no interval", or "" (decided by status)
    drifted_at: tuple[int, ...] = ()  # the concurrencies that did not reproduce

    def words(self) -> str:
        """The "reproduces?" cell: "yes (95 % intervals)", "no: drift at c=4 (±10%)"."""
        rule = f" ({self.by})" if self.by else ""
        if self.held:
            return f"yes{rule}"
        where = f" at {', '.join(f'c={c}' for c in self.drifted_at)}" if self.drifted_at else ""
        return f"no: drift{where}{rule}"


MIN_REQUESTS_FOR_INTERVAL = 8  # fewer: the ±tolerance rule (a percentile bootstrap over 4 requests is far too
# narrow — on the demo it called a -0.6 % replay of the same unit "drifted")


def _has_interval(values: Sequence[float]) -> bool:
    return len(values) >= MIN_REQUESTS_FOR_INTERVAL


@dataclass(slots=True)
class ReplayPair:
    """An old trial and its re-run; drift is the change of output tok/s per concurrency, in percent."""

    original: Trial
    replay: Trial
    _judged: dict[float, Reproduction] = field(default_factory=dict, repr=False, compare=False)

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
        """In words: "within the noise (95 % intervals)", "drifted at c=4 (±10%)", "failed again" or "was failed,
        now ok" — the rule that decided named."""
        if self.failed_again:
            same = (self.original.failure or "").split(":")[0] == (self.replay.failure or "").split(":")[0]
            return "failed again" + ("" if same else " (at another step)")
        if self.original.status != self.replay.status:
            return f"was {self.original.status}, now {self.replay.status}"
        r = self.reproduction(tolerance_pct)
        if not r.held:
            return f"drifted at {', '.join(f'c={c}' for c in r.drifted_at)} ({r.by})"
        return f"within {r.by} (no interval)" if r.by.startswith("±") else f"within the noise ({r.by})"

    def reproduction(self, tolerance_pct: float) -> Reproduction:
        """Reproduced or not, decided per level by intervals (then against now, core.confidence) where both kept
        per-request figures, by ±tolerance on output tok/s where one did not; once per tolerance (bootstraps)."""
        if (known := self._judged.get(tolerance_pct)) is not None:
            return known
        if self.original.status != self.replay.status or self.failed_again:
            judged = Reproduction(self.original.status == self.replay.status, "")
        else:
            judged = self._judge_levels(tolerance_pct)
        self._judged[tolerance_pct] = judged
        return judged

    def _judge_levels(self, tolerance_pct: float) -> Reproduction:
        by_interval = by_tolerance = False
        drifted: list[int] = []
        for c, d in self.drift.items():
            a, b = self.original.level(c), self.replay.level(c)
            if a is None or b is None:
                continue
            if _has_interval(a.tok_s_samples) and _has_interval(b.tok_s_samples):
                by_interval = True
                if compare_samples(f"c={c}", "then", a.tok_s_samples, "now", b.tok_s_samples).winner is not None:
                    drifted.append(c)
            else:
                by_tolerance = True
                if d is not None and abs(d) > tolerance_pct:
                    drifted.append(c)
        tol = f"±{tolerance_pct:g}%"
        by = (f"95 % intervals; {tol} where no interval" if by_interval and by_tolerance
              else "95 % intervals" if by_interval else tol)
        return Reproduction(not drifted, by, tuple(drifted))

    def reproduces(self, tolerance_pct: float) -> bool:
        return self.reproduction(tolerance_pct).held

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

    def held_words(self, tolerance_pct: float) -> str:
        """"2 of 3 measured trial(s) reproduced by 95 % intervals (then against now)" — and the ±tolerance rule
        named where a level kept no per-request figures (saved before intervals): the CLI's and the panel's line."""
        measured = [p for p in self.pairs if not p.failed_again]
        held = sum(1 for p in measured if p.reproduces(tolerance_pct))
        rules = " ".join(p.reproduction(tolerance_pct).by for p in measured)
        tol = f"±{tolerance_pct:g}%"
        if "95 %" in rules:
            rule = "by 95 % intervals (then against now)" + (
                f", within {tol} where a level kept fewer than {MIN_REQUESTS_FOR_INTERVAL} per-request figures"
                if tol in rules else "")
        else:
            rule = f"within {tol} (no level kept {MIN_REQUESTS_FOR_INTERVAL} per-request figures for an interval)"
        return f"{held} of {len(measured)} measured trial(s) reproduced {rule}"


@dataclass(frozen=True, slots=True)
class ReplayDone:
    outcome: ReplayOutcome


def replayable(session: Session, trial_ids: Sequence[int] | None = None) -> list[Trial]:
    """The trials to run again: those asked for, else every trial that is not itself a replay and has levels
    (one cancelled or failed before its bench has nothing to replay or to compare a replay against; one
    cancelled with levels kept stays)."""
    if trial_ids:
        missing = [i for i in trial_ids if session.trial(i) is None]
        if missing:
            raise WorkflowError(f"the session has no trial {', '.join(map(str, missing))}; "
                                f"it has {', '.join(str(t.id) for t in session.trials) or 'none'}")
        return [t for i in trial_ids if (t := session.trial(i)) is not None]
    return [t for t in session.trials if t.replay_of is None and t.unit_text and t.levels]


def nothing_to_replay(session: Session) -> str:
    """Why `replayable(session)` is empty, in words (the panel says it instead of offering a replay of nothing)."""
    bare = [t for t in session.trials if t.replay_of is None and t.unit_text and not t.levels]
    if not bare:
        return "Nothing to replay: the session has no trial with a unit."
    return (f"Nothing to replay: the session's {len(bare)} trial(s) have no benchmark levels (cancelled or failed "
            "before the bench), so there is nothing to run again or compare; benchmark one first (b).")


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
    todo = replayable(session, trial_ids)
    if not todo:  # said before the host is touched, by the panel and `session replay` alike
        raise WorkflowError(nothing_to_replay(session))
    with runner.task(Busy.REPLAY):
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
