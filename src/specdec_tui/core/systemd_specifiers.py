"""systemd's `%` specifiers in a flag's value: what systemd does to a value before the program sees it.

A unit's command line is systemd's, not a shell's: `%h`, `%i`, `%n`… are replaced when the unit loads, `%%` is one
`%`, and a `%` followed by a letter or digit systemd does not know makes it refuse the whole `ExecStart=` line — the
service then has no command and does not start ("Failed to resolve unit specifiers in …: Invalid slot; Unit
configuration has fatal error"). A value typed as `50%` plus a letter lands in the unit as typed and breaks it at
the next daemon-reload, far from where it was typed; these rules say so where it is typed.

The letters are those systemd 252 resolves, found by running `systemd-analyze verify` on one unit per letter (a
newer systemd knows a few more, e.g. `%D`; a letter it lacks is still refused by 252)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from specdec_tui.core.flag_issue import Issue

SYSTEMD_CHECKED = "252"
KNOWN = frozenset("abcdfghijlmnopqrstuvwyABCEGHIJLMNPRSTUVWY")
_SPECIFIER = re.compile(r"%(.)", re.DOTALL)  # `%%` is consumed as a pair, so `%%Z` is a literal "%Z"


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


def specifier_rules(flags: Mapping[str, str | None]) -> list[Issue]:
    """An error for a value systemd would refuse (the service would not start), a warning for one it rewrites."""
    issues: list[Issue] = []
    for name, value in flags.items():
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
