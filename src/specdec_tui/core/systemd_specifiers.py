"""systemd's `%` specifiers in a flag's value: what systemd does to a value before the program sees it.

A unit's command line is systemd's, not a shell's: `%h`, `%i`, `%n`… are replaced when the unit loads, `%%` is one
`%`, and a `%` followed by a letter or digit systemd does not know makes it refuse the whole `ExecStart=` line — the
service then has no command and does not start ("Failed to resolve unit specifiers in …: Invalid slot; Unit
configuration has fatal error"). A value typed as `50%` plus a letter lands in the unit as typed and breaks it at
the next daemon-reload, far from where it was typed; these rules say so where it is typed.

The letters are those systemd 252 resolves, found by running `systemd-analyze verify` on one unit per letter (a
newer systemd knows a few more, e.g. `%D`; a letter it lacks is still refused by 252). Its `$NAME`/`${NAME}` are
replaced by the unit's environment too (`$$` is a literal `$`): inside a value that is said, as a warning."""

from __future__ import annotations

import re
from collections.abc import Mapping

from specdec_tui.core.flag_issue import Issue

SYSTEMD_CHECKED = "252"
KNOWN = frozenset("abcdfghijlmnopqrstuvwyABCEGHIJLMNPRSTUVWY")
_SPECIFIER = re.compile(r"%(.)", re.DOTALL)  # `%%` is consumed as a pair, so `%%Z` is a literal "%Z"
# `$$` is consumed as a pair (a literal "$"); `$NAME` and `${NAME}` are replaced by the unit's environment
_VARIABLE = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def specifiers(value: str) -> tuple[list[str], list[str]]:
    """(the specifiers systemd replaces, the ones it refuses) in `value`, in order, each as written (`%h`)."""
    replaced: list[str] = []
    refused: list[str] = []
    for match in _SPECIFIER.finditer(value):
        char = match.group(1)
        if char == "%" or not (char.isascii() and char.isalnum()):
            continue  # `%%` is a literal %, and systemd keeps "%" before anything but a letter or digit
        (replaced if char in KNOWN else refused).append(match.group(0))
    return replaced, refused


def literal(value: str) -> str:
    """`value` written so systemd hands the program exactly these characters: each `%` doubled."""
    return value.replace("%", "%%")


def variables(value: str) -> list[str]:
    """The environment variables systemd replaces in `value` (`$MODEL`, `${HOME}`), each as written."""
    return [match.group(0) for match in _VARIABLE.finditer(value) if match.group(0) != "$$"]


def _variable_rule(flag: str, value: str) -> Issue | None:
    """A warning for `$NAME` inside a value (`--api-key ab$cd` reaches SGLang as "ab" when the unit sets no cd): a
    value that is one variable and nothing else (`--model-path $MODEL`) is an operator's on purpose and not said."""
    named = variables(value)
    if not named or value in named:
        return None
    return Issue("warning", flag, f"systemd replaces {', '.join(dict.fromkeys(named))} in --{flag}'s value with the "
                 "unit's environment (empty when the unit sets none; systemd.service(5), Command lines) before SGLang "
                 "sees it. Keep it if you meant the variable; write $$ for a literal $.",
                 fix={flag: _VARIABLE.sub(lambda match: "$" + match.group(0) if match.group(0) != "$$" else "$$", value)})


def specifier_rules(flags: Mapping[str, str | None]) -> list[Issue]:
    """An error for a value systemd would refuse (the service would not start), a warning for one it rewrites
    (a `%` specifier, a `$` variable)."""
    issues: list[Issue] = []
    for name, value in flags.items():
        if value and "$" in value:
            variable = _variable_rule(name.removeprefix("--"), value)
            if variable is not None:
                issues.append(variable)
        if not value or "%" not in value:
            continue
        flag = name.removeprefix("--")
        replaced, refused = specifiers(value)
        if not (refused or replaced):
            continue
        named = ", ".join(dict.fromkeys(refused or replaced))
        what = (f"systemd {SYSTEMD_CHECKED} reads {named} in --{flag}'s value as a specifier it does not know: it "
                "refuses the whole ExecStart= line and the service will not start." if refused else
                f"systemd replaces {named} in --{flag}'s value when the unit loads (systemd.unit(5), Specifiers), "
                "so the program gets another value than the one written.")
        issues.append(Issue("error" if refused else "warning", flag, f"{what} Write %% for a literal %.",
                            fix={flag: literal(value)}))
    return issues
