"""A sweep's plan, its events and its outcome, and the per-value units it pushes: what `loop.sweep` runs and a
form, the CLI or a test builds, checked before anything reaches the host (a bad value stops the sweep at the start)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from specdec_tui.core.flags import TREE_FLAGS, apply_fix, canonical_name, validate_unit
from specdec_tui.core.session import Trial
from specdec_tui.core.sweep_rules import CurvePoint, Objective, SweepChoice
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.correctness_gate import GateResult
from specdec_tui.loop.unit_checks import WorkflowError, check_unit

STEPS = "speculative-num-steps"
TOPK = "speculative-eagle-topk"
DRAFT = "speculative-num-draft-tokens"
WORSE = "two consecutive values got worse"

EventSink = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """What to sweep and how to judge it. `apply_best` leaves the host on the winner; otherwise the unit
    that ran before the sweep is restored. `hosts`: the config hosts a panel's sweep runs on at once, its
    own host first (empty: its own host only); `run_sweep` and `run_parallel_sweep` are given their loops."""

    flag: str
    values: tuple[str, ...]
    repeats: int = 3
    objective: Objective = Objective()
    min_running_requests: int | None = None
    stop_after_worse: bool = True
    apply_best: bool = False
    hosts: tuple[str, ...] = ()
    correctness_gate: bool = False  # the winner must answer as without speculation before it is promoted
    sweep_id: int = 0  # its number in the session (core.sweep_runs), given when it starts


@dataclass(frozen=True, slots=True)
class SweepValueStarted:
    value: str
    index: int  # 0-based position in the plan
    total: int
    label: str
    host: str = ""  # the host that runs it


@dataclass(frozen=True, slots=True)
class SweepTrialDone:
    value: str
    repeat: int  # 1-based
    trial: Trial


@dataclass(frozen=True, slots=True)
class SweepStopped:
    reason: str


@dataclass(frozen=True, slots=True)
class OnHost:
    """A step's event (phase, benchmark progress…) from one host of a sweep on several hosts; a sweep on
    one host sends its steps' events unwrapped."""

    host: str
    event: object


@dataclass(frozen=True, slots=True)
class SweepHostFailed:
    """A host of a sweep on several hosts failed (lost, or would not come back); the others go on and
    its trials so far are kept. `values` are those of its share it never finished."""

    host: str
    reason: str
    values: tuple[str, ...]


@dataclass(slots=True)
class SweepOutcome:
    """Everything a sweep found: trials per value, the choice with its reasons, the curves, where the host was left."""

    plan: SweepPlan
    trials_by_value: dict[str, list[Trial]] = field(default_factory=dict)
    unit_by_value: dict[str, str] = field(default_factory=dict)  # on several hosts: as the host that ran it pushed it
    choice: SweepChoice | None = None
    curve: list[CurvePoint] = field(default_factory=list)
    stopped: str | None = None  # why it ended before the last value
    left_on: str = ""  # "winner", "original" or a sentence saying what went wrong (on several hosts: all of them)
    final_unit_text: str = ""  # the (first) host's unit after the sweep
    host_of_value: dict[str, str] = field(default_factory=dict)  # which host ran each value
    units_by_host: dict[str, dict[str, str]] = field(default_factory=dict)  # host → value → its unit (own port)
    left_on_by_host: dict[str, str] = field(default_factory=dict)  # as left_on, per host
    final_unit_by_host: dict[str, str] = field(default_factory=dict)
    host_failures: dict[str, str] = field(default_factory=dict)  # host → what went wrong, in words
    past_stop: list[str] = field(default_factory=list)  # run on another host before the stop was known: not judged
    gate: GateResult | None = None  # the correctness gate's verdict on the winner (None: not run)

    @property
    def winner(self) -> str | None:
        return self.choice.winner.value if self.choice and self.choice.winner else None

    @property
    def promoted(self) -> str | None:
        """The winner, unless it failed the correctness gate (then nothing is promoted, not the runner-up)."""
        return self.winner if self.gate is None or self.gate.passed else None

    @property
    def reasons(self) -> list[str]:
        return self.choice.reasons if self.choice else []


@dataclass(frozen=True, slots=True)
class SweepDone:
    outcome: SweepOutcome


class SweepError(WorkflowError):
    """The plan cannot run (bad flag value, an edit that would not validate); nothing was pushed."""


# ---------------------------------------------------------------------------------------------- edits


MAX_VALUES = 64  # each value is a push, a restart and a benchmark (times --repeats)
MAX_REPEATS = 20  # runs per value: the panel's form and `sweep --repeats` alike
_TOO_MANY = "at most " + str(MAX_VALUES) + " values in one sweep ({}): each is a restart and a benchmark"


def parse_values(text: str) -> tuple[str, ...]:
    """`1,2,3`, `1..6` or a mix (`1..3,5`) → the values in order, without duplicates."""
    from specdec_tui.core.comma_list import EmptyTerm, comma_terms

    try:
        parts = comma_terms(text)
    except EmptyTerm:
        raise SweepError(f"{text!r} has an empty value between commas: a value left out? (e.g. 1,2,3 or 1..6)") from None
    values: list[str] = []
    for part in parts:
        if ".." in part:
            lo, _, hi = part.partition("..")
            try:
                start, end = int(lo), int(hi)
            except ValueError:
                raise SweepError(f"a range is written like 1..6 with whole numbers, not {part!r}") from None
            if end < start:
                raise SweepError(f"the range {part} runs backwards; write {end}..{start}")
            if end - start >= MAX_VALUES:  # checked before listing: 1..99999999999 filled the memory
                raise SweepError(_TOO_MANY.format(f"the range {part} holds {end - start + 1:,}"))
            values.extend(str(v) for v in range(start, end + 1))
        else:
            values.append(part)
        if len(values) > MAX_VALUES:
            raise SweepError(_TOO_MANY.format(f"{len(values):,} given"))
    if not values:
        raise SweepError("no values to sweep; give e.g. --values 1,2,3 or --values 1..6")
    return tuple(dict.fromkeys(values))


def edit_for_value(base_text: str, flag: str, value: str) -> str:
    """The unit with `flag` set to `value`, with the draft tree kept valid the way SGLang wants it:
    steps with topk 1 → draft tokens = steps + 1; other tree conflicts get the validator's own fix,
    except a fix that would change the swept flag itself (that would make the point meaningless)."""
    flag = canonical_name(flag)
    unit = UnitFile.parse(base_text)
    changes = {flag: value}
    if flag == STEPS and unit.get_flag(TOPK) in (None, "1") and value.isdigit():
        changes[DRAFT] = str(int(value) + 1)
    unit = unit.set_flags(changes)
    for _ in range(3):  # a fix can reveal the next rule; three passes settle every tree rule
        fixes = [issue for issue in validate_unit(unit)
                 if issue.flag in TREE_FLAGS and issue.fixable and flag not in (issue.fix or {})
                 and flag not in issue.remove]
        if not fixes:
            break
        unit = apply_fix(unit, fixes[0])
    return unit.text


def plan_units(base_text: str, plan: SweepPlan) -> dict[str, str]:
    """Every value's unit, checked before anything is pushed: a bad value stops the sweep at the start."""
    if not 1 <= plan.repeats <= MAX_REPEATS:
        raise SweepError(f"repeats: between 1 and {MAX_REPEATS} runs per value (got {plan.repeats})")
    units = {}
    for value in plan.values:
        text = edit_for_value(base_text, plan.flag, value)
        try:
            check_unit(text)
        except WorkflowError as err:
            raise SweepError(f"--{canonical_name(plan.flag)} {value}: {err}") from None
        overridden = [issue for issue in validate_unit(UnitFile.parse(text))
                      if canonical_name(plan.flag) in (issue.fix or {})]
        if overridden:  # SGLang would replace the value at startup: the point would measure something else
            raise SweepError(f"--{canonical_name(plan.flag)} {value}: {overridden[0].message}")
        units[value] = text
    return units
