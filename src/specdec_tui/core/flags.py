"""Checking a unit's SGLang flags: each value against the flag table, then SGLang's startup rules, as Issues;
and applying an Issue's fix to a unit.

The table lives in core/flag_table.py, the deprecated aliases in core/flag_deprecations.py, the cross-flag rules in
core/flag_rules.py (speculative) and core/flag_rules_capacity.py; this module is the one entry point the panel,
the CLI and the sweep call (its names below are re-exported for them).

Errors: nothing here raises on user input; `validate` reports problems as Issue records. `spec_for` returns
None for an unknown name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, Self, TypeVar

from specdec_tui.core.flag_deprecations import DEPRECATIONS, deprecation_message
from specdec_tui.core.flag_issue import Issue, Level
from specdec_tui.core.flag_rules import speculative_rules
from specdec_tui.core.flag_rules_capacity import capacity_rules, cuda_graph_config_error
from specdec_tui.core.flag_table import (
    BUILTIN_ALGORITHMS,
    EAGLE_FAMILY,
    FLAGS,
    SPEC_ALGORITHMS,
    TREE_FLAGS,
    FlagSpec,
    FlagType,
    Group,
    bare,
    canonical_name,
    groups,
    spec_for,
)

__all__ = [
    "BUILTIN_ALGORITHMS", "EAGLE_FAMILY", "FLAGS", "SPEC_ALGORITHMS", "TREE_FLAGS", "FlagEditable", "FlagSpec",
    "FlagType", "Group", "Issue", "Level", "apply_fix", "canonical_name", "groups", "listed", "spec_for", "validate",
]


def _check_choice(name: str, spec: FlagSpec, value: str) -> Issue | None:
    flag = f"--{name}"
    if value in spec.choices:
        return None
    if spec.open_choices and value != value.upper() and value.upper() in BUILTIN_ALGORITHMS:
        return Issue("warning", name, f"{flag} {value}: SGLang upper-cases it to {value.upper()}; older releases "
                     "(v0.5.x, fixed argparse choices) reject other spellings.", fix={name: value.upper()})
    if spec.open_choices:
        if value.upper() in BUILTIN_ALGORITHMS:
            return None
        return Issue("warning", name, f"{flag} {value} is not built in to SGLang (ok if a plugin registers it; "
                     f"otherwise SGLang stops with 'Unknown speculative algorithm name: {value}'). Built in: "
                     + ", ".join(spec.choices) + ".")
    return Issue("error", name, f"{flag} {value} is not a choice SGLang knows; use {spec.describe_range()}.")


def _check_value(name: str, spec: FlagSpec, value: str | None) -> Issue | None:
    flag = f"--{name}"
    if spec.is_switch:
        if value is not None:
            return Issue("error", name, f"{flag} is a switch and takes no value; SGLang would stop with "
                         f"'unrecognized arguments: {value}'. Write it bare to turn it on, or remove it.",
                         fix={name: None})
        return None
    if value is None:
        return Issue("error", name, f"{flag} needs a value; SGLang would stop at startup.")
    if spec.type == "choice":
        return _check_choice(name, spec, value)
    if spec.type == "json":
        error = cuda_graph_config_error(value)
        return Issue("error", name, f"SGLang would stop at startup: {error}") if error else None
    if spec.type == "int_list":
        bad = [part for part in value.split() if not part.lstrip("-").isdigit()]
        return Issue("error", name, f"{flag} takes whole numbers separated by spaces, not {bad[0]!r}.") if bad else None
    if spec.type not in ("int", "float"):
        return None
    try:
        number = int(value) if spec.type == "int" else float(value)
    except ValueError:
        kind = "a whole number" if spec.type == "int" else "a number"
        return Issue("error", name, f"{flag} needs {kind}, not {value!r}.")
    if value in spec.special:
        return None
    too_low = spec.minimum is not None and (number <= spec.minimum if spec.exclusive_min else number < spec.minimum)
    too_high = spec.maximum is not None and (number >= spec.maximum if spec.exclusive_max else number > spec.maximum)
    if too_low or too_high:
        return Issue("error", name, f"{flag} {value} is out of range: it must be {spec.describe_range()}.")
    return None


def _deprecation(name: str, value: str | None, flags: Mapping[str, str | None]) -> Issue:
    """The deprecated alias, in SGLang's words, with the rewrite to the flags that replace it."""
    deprecation = DEPRECATIONS[name]
    rewrite = deprecation.rewrite(value, flags)
    kept = [f"--{new}" for new, _ in deprecation.replacements if new not in rewrite]
    note = " " + " and ".join(kept) + " is also set, so the fix only removes the old flag." if kept else ""
    return Issue("warning", name, f"SGLang warns at startup: {deprecation_message('--' + name)} It still works; "
                 "older SGLang releases know only the old name, so rewrite it when the host runs a current SGLang."
                 + note, fix=rewrite or None, remove=(name,))


def validate(flags: Mapping[str, str | None]) -> list[Issue]:
    """Checks a flag set (names with or without "--", aliases allowed) against the table and SGLang's rules.

    Unknown flags are kept and reported as warnings; value errors and deprecations come first, then cross-flag
    rules.
    """
    issues: list[Issue] = []
    canonical: dict[str, str | None] = {}
    unreadable: dict[str, str | None] = {}
    written_as: dict[str, str] = {}
    for written, value in flags.items():
        name = canonical_name(written)
        if name in canonical:
            issues.append(Issue("warning", name, f"--{written_as[name]} and --{bare(written)} set the same "
                                "thing; SGLang keeps the last one.", remove=(written_as[name],)))
        canonical[name], written_as[name] = value, bare(written)
    for name, value in canonical.items():
        spec = FLAGS.get(name)
        if spec is None and name not in DEPRECATIONS:
            issues.append(Issue("warning", name, f"--{name} is not in this tool's SGLang flag table; it is kept "
                                "as written and not checked."))
            continue
        problem = _check_value(name, spec, value) if spec is not None else None
        if problem:
            issues.append(problem)
            if spec is not None and not spec.is_switch and problem.level == "error":
                unreadable[name] = ""  # the rules across flags read it as a value error already reported
        elif name in DEPRECATIONS:
            issues.append(_deprecation(name, value, canonical))
    # Rules across flags see only values that passed their own check: a rule (and its fix) built on
    # "--speculative-num-steps 0" would be about a number SGLang never runs with (issue 35: `f` then "fixed"
    # the draft tokens to 1 while the steps error stayed).
    checked = {**canonical, **unreadable}
    issues.extend(speculative_rules(checked))
    issues.extend(capacity_rules(checked))
    return issues


def listed(issues: Iterable[Issue]) -> str:
    """The issues' messages as one clause list ("a; b"), without their closing full stops, for a sentence that
    goes on after them."""
    return "; ".join(issue.message.rstrip(".") for issue in issues)


class FlagEditable(Protocol):
    """What `apply_fix` needs of a unit (`unit.UnitFile` is one); a protocol, so this module does not
    import the unit model, which imports this one for flag names."""

    def set_flags(self, mapping: Mapping[str, str | None], unset: Iterable[str] = ()) -> Self: ...


EditableT = TypeVar("EditableT", bound=FlagEditable)


def apply_fix(unit: EditableT, issue: Issue) -> EditableT:
    """Returns the unit with the issue's fix applied (unchanged when the issue has none)."""
    return unit.set_flags(issue.fix or {}, unset=issue.remove)
