"""The benchmark settings a trial really ran with, in words, for every place that shows them.

A session's header used to name the session's profile while its trials ran another (the demo's 128 tokens,
ignore_eos, repetitive prompts): each trial records its own `Trial.profile`, and views show that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Session


class Profiled(Protocol):
    """A trial, or its headline (`core.session_index`)."""

    @property
    def id(self) -> int: ...
    @property
    def profile(self) -> BenchProfile: ...


def settings_words(profile: BenchProfile) -> str:
    """"profile demo: max_tokens 128, temperature 0, ignore_eos, prompts repetitive" (what changes acceptance)."""
    return (f"profile {profile.name}: max_tokens {profile.max_tokens}, temperature {profile.temperature:g}"
            f"{', ignore_eos' if profile.ignore_eos else ''}, {load_words(profile)}")


def load_words(profile: BenchProfile) -> str:
    """"prompts realistic", or "workload chat seed 3, poisson 12/s" when a workload or a rate is set."""
    words = f"workload {profile.workload} seed {profile.seed}" if profile.workload else f"prompts {profile.prompts}"
    if profile.rate is not None:
        words += f", {profile.arrivals} {profile.rate:g}/s" + (f" burst {profile.burst:g}" if profile.burst != 1 else "")
    if profile.slo:
        words += f", SLO {' '.join(profile.slo)}"
    return words


def short_settings(profile: BenchProfile) -> str:
    """For a table cell: "128 tok · t=0 · ignore_eos · repetitive"."""
    parts = [f"{profile.max_tokens} tok", f"t={profile.temperature:g}"]
    if profile.ignore_eos:
        parts.append("ignore_eos")
    parts.append(profile.workload or profile.prompts)
    if profile.rate is not None:
        parts.append(f"{profile.rate:g}/s")
    return " · ".join(parts)


def _field_words(value: object) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, tuple) else str(value)


def told_apart(profile: BenchProfile, others: Sequence[BenchProfile]) -> str:
    """`short_settings` of `profile`, with the settings where it differs from `others` appended when the short words
    are the same ("128 tok · t=0.7 · ignore_eos · realistic · concurrency 1,4,16"): a session listed two trials'
    "different settings" in two identical lines (they differed in their concurrency levels)."""
    words = short_settings(profile)
    alike = [other for other in others if other != profile and short_settings(other) == words]
    if not alike:
        return words
    differ = [f.name for f in dataclasses.fields(profile) if f.name != "name"
              and any(getattr(profile, f.name) != getattr(other, f.name) for other in alike)]
    return " · ".join([words, *(f"{name} {_field_words(getattr(profile, name)) or '-'}" for name in differ)])


def distinct_profiles(trials: Sequence[Profiled]) -> list[BenchProfile]:
    """The profiles the trials ran with, each once, in first-seen order."""
    out: list[BenchProfile] = []
    for trial in trials:
        if trial.profile not in out:
            out.append(trial.profile)
    return out


def session_settings(session: Session) -> str:
    """The header's words: the trials' own settings when they all agree, else a pointer to each trial's."""
    return trials_settings(session.trials, session.profile)


def trials_settings(trials: Sequence[Profiled], default: BenchProfile) -> str:
    """`session_settings` of these trials (or their headlines); `default`: the session's, when there are none."""
    profiles = distinct_profiles(trials) or [default]
    if len(profiles) == 1:
        return "trials ran " + settings_words(profiles[0])
    return f"trials ran {len(profiles)} different settings (each trial's are listed with it)"
