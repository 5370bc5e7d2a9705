"""The sweep form as typed (flag, values, runs, objective) → a `SweepPlan`, or a sentence naming the field
that cannot run. Kept out of the screen so what a user typed is checked without a terminal."""

from __future__ import annotations

from dataclasses import dataclass

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.sweep_rules import Objective
from specdec_tui.loop.sweep import SweepError, SweepPlan, parse_values

# The flags the sweep form offers: (label, flag name).
SWEEP_FLAGS: tuple[tuple[str, str], ...] = (
    ("steps (speculative-num-steps)", "speculative-num-steps"),
    ("topk (speculative-eagle-topk)", "speculative-eagle-topk"),
    ("draft tokens (speculative-num-draft-tokens)", "speculative-num-draft-tokens"),
)
OBJECTIVES: tuple[tuple[str, str], ...] = (
    ("c=1 tok/s, high concurrency kept ≥ 50%", "c1"),
    ("throughput at the highest concurrency", "throughput"),
)


class FormError(ValueError):
    """What the user typed cannot run; the message says which field and what to write."""



@dataclass(frozen=True, slots=True)
class SweepForm:
    """What the sweep form holds, as typed."""

    flag: str
    values: str
    repeats: str
    objective: str  # "c1" | "throughput"


def plan_from_form(form: SweepForm, profile: BenchProfile) -> SweepPlan:
    """The `sweep.SweepPlan` the form describes; FormError naming the field when it cannot run."""
    if form.flag not in {name for _, name in SWEEP_FLAGS}:
        raise FormError(f"flag: pick one of {', '.join(name for _, name in SWEEP_FLAGS)}")
    try:
        values = parse_values(form.values)
    except SweepError as err:
        raise FormError(f"values: {err}") from None
    bad = [v for v in values if not v.isdigit()]
    if bad:
        raise FormError(f"values: {', '.join(bad)} is not a whole number; write e.g. 1..6 or 1,2,3")
    try:
        repeats = int(form.repeats.strip())
    except ValueError:
        raise FormError(f"repeats: {form.repeats.strip() or 'nothing'} is not a whole number; write e.g. 3") from None
    if not 1 <= repeats <= 20:
        raise FormError("repeats: between 1 and 20 runs per value")
    if form.objective == "throughput":
        objective = Objective("throughput", concurrency=max(profile.concurrency))
    else:
        objective = Objective("c1_floor")
    return SweepPlan(flag=form.flag, values=values, repeats=repeats, objective=objective)


