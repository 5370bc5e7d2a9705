"""Checking a unit's SGLang flags as the release judges them, as Issues; and applying an Issue's fix to a unit.

Each flag is parsed by the release's own parser rebuilt from its schema (core/sglang_schema: unknown options,
ambiguous prefixes, missing values, types, choices, removed values, in argparse's and SGLang's words), then the
release's start-up checks run on the flags it took (core/flag_rules.py for the speculative hooks,
core/flag_rules_capacity.py for the CUDA graphs and memory). The rewrites the panel offers for old flags are in
core/flag_deprecations.py. This module is the one entry point the panel, the CLI and the sweep call (its names
below are re-exported for them).

Errors: nothing here raises on user input; `validate` reports problems as Issue records. `spec_for` returns
None for a name the release does not know.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, Self, TypeVar

from specdec_tui.core.exec_start import ExecStart
from specdec_tui.core.flag_deprecations import REWRITES
from specdec_tui.core.flag_issue import Issue, Level
from specdec_tui.core.flag_rules import speculative_rules
from specdec_tui.core.flag_rules_capacity import capacity_rules
from specdec_tui.core.flag_rules_ranges import range_rules
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
    takes_list,
)
from specdec_tui.core.sglang_schema.argv_parser import check_flag
from specdec_tui.core.sglang_schema.schema import ReleaseSchema, default_schema
from specdec_tui.core.sglang_schema.sim_options import SIM_MODULE, with_simulator
from specdec_tui.core.systemd_specifiers import specifier_rules

__all__ = [
    "BUILTIN_ALGORITHMS", "EAGLE_FAMILY", "FLAGS", "SPEC_ALGORITHMS", "TREE_FLAGS", "FlagEditable", "FlagSpec",
    "FlagType", "Group", "Issue", "Level", "apply_fix", "canonical_name", "groups", "listed", "spec_for", "takes_list",
    "validate", "validate_unit", "schema_for",
]


def _offered_rewrite(schema: ReleaseSchema, name: str, value: str | None,
                     flags: Mapping[str, str | None]) -> tuple[dict[str, str | None], tuple[str, ...]] | None:
    """The panel's rewrite of an old flag (sets, removals), when the release has every flag it writes."""
    rewrite = REWRITES.get(name)
    if rewrite is None or any(schema.option(new) is None for new in rewrite.writes()):
        return None
    return rewrite.rewrite(value, flags), (name, *(d for d in rewrite.drop if d in flags))


def _refusal(schema: ReleaseSchema, written: str, value: str | None, error: str,
             flags: Mapping[str, str | None]) -> Issue:
    """argparse's refusal of one flag, with the rewrite (an old flag) or the removal (a flag the release does not
    have) that `f` applies."""
    text = f"SGLang {schema.version} refuses the command line (exit 2): {error}"
    option, candidates = schema.resolve(written)
    rewrite = _offered_rewrite(schema, bare(written), value, flags) if option is None else None
    if rewrite is not None:
        sets, removes = rewrite
        new = ", ".join(f"--{n}" for n in sets) or "the flags already set"
        return Issue("error", bare(written), f"{text}. Older releases took --{bare(written)}; the fix writes {new}.",
                     fix=sets or None, remove=removes)
    if option is None and not candidates:
        return Issue("error", bare(written), f"{text}. The fix removes it.", remove=(bare(written),))
    if option is None:
        return Issue("error", bare(written), f"{text}. Write the whole name of the one you mean.")
    if option.takes_value is False and value is not None:
        return Issue("error", option.name, f"{text}. --{option.name} is a switch and takes no value; the fix "
                     "writes it bare.", fix={option.name: None})
    return Issue("error", option.name, text)


def _deprecation(schema: ReleaseSchema, name: str, value: str | None, lines: list[str],
                 flags: Mapping[str, str | None]) -> Issue:
    """The deprecated flag, in SGLang's words, with the rewrite to the flags that replace it."""
    said = " ".join(lines)
    rewrite = _offered_rewrite(schema, name, value, flags)
    if rewrite is None:
        return Issue("warning", name, f"SGLang {schema.version} warns at startup: {said} It still works.")
    sets, removes = rewrite
    kept = [f"--{n}" for n in REWRITES[name].writes() if n not in sets]
    note = " " + " and ".join(kept) + " is also set, so the fix only removes the old flag." if kept else ""
    return Issue("warning", name, f"SGLang {schema.version} warns at startup: {said} It still works; the fix "
                 "rewrites it (releases before the new flag know only the old one)." + note,
                 fix=sets or None, remove=removes)


def validate(flags: Mapping[str, str | None], schema: ReleaseSchema | None = None) -> list[Issue]:
    """Checks a flag set (names with or without "--", as written in the unit) as the release does: first each
    flag as its parser takes it (errors stop SGLang before anything loads; deprecations are warnings), then the
    release's start-up checks on the flags it took. `schema`: the host's release (default: the bundled 0.5.23)."""
    release = schema or default_schema()
    issues: list[Issue] = []
    canonical: dict[str, str | None] = {}
    written_as: dict[str, str] = {}
    refused: set[str] = set()
    for written, value in flags.items():
        error, deprecations = check_flag(release, bare(written), value)
        if error is not None:
            issues.append(_refusal(release, written, value, error, flags))
            option, _ = release.resolve(bare(written))
            if option is not None:  # the rules see it as given but unreadable (""), never as missing, and build
                refused.add(option.name)  # no fix on a value SGLang never runs with (issue 35)
                canonical[option.name] = "" if option.takes_value else value
                written_as[option.name] = bare(written)
            continue
        name = canonical_name(written, release)
        if name in canonical:
            issues.append(Issue("warning", name, f"--{written_as[name]} and --{bare(written)} set the same "
                                "thing; SGLang keeps the last one.", remove=(written_as[name],)))
        canonical[name], written_as[name] = value, bare(written)
        if deprecations:
            issues.append(_deprecation(release, name, value, deprecations, {canonical_name(k, release): v
                                                                             for k, v in flags.items()}))
    for option in release.options:
        if option.required and option.name not in canonical and option.name not in refused:
            issues.append(Issue("error", option.name, f"SGLang {release.version} refuses the command line (exit 2): "
                                "the following arguments are required: " + "/".join(option.option_strings)))
    issues.extend(speculative_rules(canonical, release.version))
    issues.extend(capacity_rules(canonical, release.version))
    issues.extend(range_rules(canonical, release.version))
    issues.extend(specifier_rules(flags))  # what systemd does to a value before SGLang sees it
    return issues


def listed(issues: Iterable[Issue]) -> str:
    """The issues' messages as one clause list ("a; b"), without their closing full stops, for a sentence that
    goes on after them."""
    return "; ".join(issue.message.rstrip(".") for issue in issues)


class UnitLike(Protocol):
    """What `validate_unit` needs of a unit (`unit.UnitFile` is one)."""

    @property
    def exec_start(self) -> ExecStart: ...

    def flags(self) -> dict[str, str | None]: ...


def schema_for(unit: UnitLike, schema: ReleaseSchema | None = None) -> ReleaseSchema:
    """The parser a unit's program has: the release's, plus the simulator's own options when it runs the
    simulator (the demo's and the lab's units)."""
    release = schema or default_schema()
    return with_simulator(release) if unit.exec_start.python_module == SIM_MODULE else release


def validate_unit(unit: UnitLike, schema: ReleaseSchema | None = None) -> list[Issue]:
    """`validate` on a unit's flags, with the parser its program has (see `schema_for`)."""
    return validate(unit.flags(), schema_for(unit, schema))


class FlagEditable(Protocol):
    """What `apply_fix` needs of a unit (`unit.UnitFile` is one); a protocol, so this module does not
    import the unit model, which imports this one for flag names."""

    def set_flags(self, mapping: Mapping[str, str | None], unset: Iterable[str] = ()) -> Self: ...


EditableT = TypeVar("EditableT", bound=FlagEditable)


def apply_fix(unit: EditableT, issue: Issue) -> EditableT:
    """Returns the unit with the issue's fix applied (unchanged when the issue has none)."""
    return unit.set_flags(issue.fix or {}, unset=issue.remove)
