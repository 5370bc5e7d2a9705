"""The sweep form as typed (flag, values, runs, objective, hosts) → a `SweepPlan`, or a sentence naming the field
that cannot run. Kept out of the screen so what a user typed is checked without a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.sweep_rules import Objective
from specdec_tui.loop.sweep_plan import MAX_REPEATS, SweepError, SweepPlan, parse_values

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
    hosts: str = ""  # config host names, "a, b c"; "" is the active host alone


def hosts_from_form(text: str, configured: Sequence[str], active: str) -> tuple[str, ...]:
    """The hosts to sweep on, the active one first (the sweep starts from its unit); FormError naming a host
    the config does not know, or a list without the active host."""
    names = tuple(dict.fromkeys(n for n in text.replace(",", " ").split() if n))
    if not names:
        return (active,) if active else ()
    unknown = [n for n in names if n not in configured and n != active]
    if unknown:
        known = ", ".join(sorted(configured)) or "none"
        raise FormError(f"hosts: no host named {unknown[0]} in the config (configured: {known})")
    if active not in names:
        raise FormError(f"hosts: include {active}, the host this panel runs on (the sweep starts from its unit)")
    return (active, *(n for n in names if n != active))


def plan_from_form(form: SweepForm, profile: BenchProfile, *, configured: Sequence[str] = (),
                   active: str = "") -> SweepPlan:
    """The `sweep.SweepPlan` the form describes; FormError naming the field when it cannot run. `configured`
    and `active`: the config's host names and the panel's host, for the hosts field."""
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
        ranged = " (a range goes in the values field)" if ".." in form.repeats or "," in form.repeats else ""
        raise FormError(f"repeats: {form.repeats.strip() or 'nothing'} is not a whole number of runs per value"
                        f"{ranged}; write e.g. 3") from None
    if not 1 <= repeats <= MAX_REPEATS:
        raise FormError(f"repeats: between 1 and {MAX_REPEATS} runs per value")
    if form.objective == "throughput":
        objective = Objective("throughput", concurrency=max(profile.concurrency))
    else:
        objective = Objective("c1_floor")
    hosts = hosts_from_form(form.hosts, configured, active)
    return SweepPlan(flag=form.flag, values=values, repeats=repeats, objective=objective,
                     hosts=hosts if len(hosts) > 1 else (), correctness_gate=True)  # as the CLI's default


