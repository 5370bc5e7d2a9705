"""The space a tune searches: the flags and values the operator names, every combination's unit, and which the
release refuses (never launched) or runs as another combination (launched once).

`speculative-num-steps=0` (or `speculative-algorithm=off`) stands for the unit without speculative flags;
with speculation on, topk 0 or draft tokens 0 are not configurations (bench_speculative.py's rule: 0 means
off only for all three). Each combination's unit goes through the same edit as a sweep's value (the tree kept
valid the way SGLang would start it) and through `check_unit`, so the tuner never pushes what a push refuses.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from specdec_tui.core.comma_list import EmptyTerm, comma_terms
from specdec_tui.core.flags import TREE_FLAGS, apply_fix, canonical_name, validate
from specdec_tui.core.tune_objective import Point, point_label, point_of
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.unit_checks import WorkflowError, check_unit

STEPS, TOPK, DRAFT = TREE_FLAGS
ALGORITHM = "speculative-algorithm"
TUNABLE = (ALGORITHM, STEPS, TOPK, DRAFT, "cuda-graph-max-bs-decode", "max-running-requests", "mem-fraction-static")
OFF_WORDS = frozenset({"off", "none", "0"})
SPECULATIVE_PREFIX = "speculative-"


class SpaceError(WorkflowError):
    """The space cannot be searched (unknown flag, no values, nothing valid); nothing was launched."""


def parse_space(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`--space FLAG=V1,V2,…` given once per flag → flag → values, in the order given."""
    space: dict[str, tuple[str, ...]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        flag = canonical_name(name.strip().removeprefix("--"))
        if not sep or not values.strip():
            raise SpaceError(f"--space {item!r}: write FLAG=V1,V2,… e.g. speculative-num-steps=0,1,3")
        if flag not in TUNABLE:
            raise SpaceError(f"--space {flag}: the tuner searches {', '.join(TUNABLE)}")
        if flag in space:
            raise SpaceError(f"--space {flag} is given twice; list all its values once")
        try:
            space[flag] = tuple(dict.fromkeys(comma_terms(values)))
        except EmptyTerm:
            raise SpaceError(f"--space {item!r} has an empty value between commas: a value left out? "
                             "(e.g. speculative-num-steps=0,1,3)") from None
    if not space:
        raise SpaceError("give at least one --space FLAG=V1,V2,…")
    return space


@dataclass(frozen=True, slots=True)
class Candidate:
    """One combination of the space as it will run: the values named, the unit pushed, and where it sits."""

    point: Point  # the values as the unit runs them (after SGLang's own rewrites)
    unit_text: str
    named: tuple[Point, ...]  # the combinations of the space that run as this one

    @property
    def label(self) -> str:
        return point_label(self.point)

    @property
    def speculative(self) -> bool:
        return dict(self.point).get(STEPS, "0") != "0"


@dataclass(frozen=True, slots=True)
class Refusal:
    point: Point
    reason: str


def _off(values: Mapping[str, str]) -> bool:
    return values.get(STEPS) == "0" or values.get(ALGORITHM, "").lower() in OFF_WORDS


def unit_for(base_text: str, values: Mapping[str, str]) -> str:
    """The base unit with `values` set; off drops every speculative flag. Tree conflicts get the validator's own
    fix unless it would change a value the space names (then the combination is refused by check_unit)."""
    unit = UnitFile.parse(base_text)
    if _off(values):
        for flag in [f for f in unit.flags() if canonical_name(f).startswith(SPECULATIVE_PREFIX)]:
            unit = unit.remove_flag(flag)
        rest = {k: v for k, v in values.items() if not k.startswith(SPECULATIVE_PREFIX)}
        return unit.set_flags(rest).text if rest else unit.text
    unit = unit.set_flags(dict(values))
    for _ in range(3):  # as sweep.edit_for_value: a fix can reveal the next rule
        fixes = [i for i in validate(unit.flags()) if i.flag in TREE_FLAGS and i.fixable and i.level == "warning"
                 and not i.remove]
        if not fixes:
            break
        unit = apply_fix(unit, fixes[0])
    return unit.text


def _runs_as(text: str, flags: Sequence[str]) -> Point:
    """The space's flags as the unit sets them (absent → 0 for the tree, "off" for the algorithm)."""
    got = {canonical_name(k): v for k, v in UnitFile.parse(text).flags().items()}
    spec = STEPS in got
    out = {}
    for flag in flags:
        if flag in TREE_FLAGS and not spec:
            out[flag] = "0"
        elif flag == ALGORITHM and not spec and flag not in got:
            out[flag] = "off"
        else:
            out[flag] = str(got.get(flag) or "")
    return point_of(out)


def candidates(base_text: str, space: Mapping[str, Sequence[str]]) -> tuple[list[Candidate], list[Refusal]]:
    """Every combination's candidate (combinations that run as the same unit are one candidate) and the ones the
    release refuses, with its words."""
    flags = list(space)
    by_unit: dict[str, tuple[Point, list[Point]]] = {}
    refused: list[Refusal] = []
    for combo in itertools.product(*(space[f] for f in flags)):
        values = dict(zip(flags, combo, strict=True))
        named = point_of(values)
        if not _off(values) and (values.get(TOPK) == "0" or values.get(DRAFT) == "0"):
            refused.append(Refusal(named, "topk or draft tokens 0 stand for off only with steps 0"))
            continue
        try:
            text = unit_for(base_text, values)
            check_unit(text)
        except (WorkflowError, ValueError) as err:
            refused.append(Refusal(named, str(err)))
            continue
        entry = by_unit.setdefault(text, (_runs_as(text, flags), []))
        entry[1].append(named)
    found = [Candidate(point, text, tuple(named)) for text, (point, named) in by_unit.items()]
    if not found:
        first = refused[0].reason if refused else "the space is empty"
        raise SpaceError(f"no combination of the space can be launched: {first}")
    return found, refused


def coordinates(point: Point, space: Mapping[str, Sequence[str]]) -> tuple[float, ...]:
    """Where a candidate sits, each flag scaled to 0..1 (numbers on a log scale, as steps/topk/draft act
    multiplicatively; a word by its place in the list) — the search's distance."""
    values = dict(point)
    out = []
    for flag, listed in space.items():
        value = values.get(flag, "")
        numbers = [_number(v) for v in listed]
        if all(n is not None for n in numbers) and _number(value) is not None:
            lo = min(n for n in numbers if n is not None)
            hi = max(n for n in numbers if n is not None)
            v = _number(value)
            assert v is not None
            scale = math.log1p(hi - lo) if hi > lo else 1.0
            out.append(math.log1p(max(v - lo, 0.0)) / scale)
        else:
            out.append(listed.index(value) / max(len(listed) - 1, 1) if value in listed else 0.0)
    return tuple(out)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
