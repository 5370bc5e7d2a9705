"""Is this benchmark's output fit to judge speculative decoding by? Warnings in words when it is not.

The seed's trap: temperature 0 with ignore_eos makes the model run past its natural end into
repetition, which a draft model predicts almost perfectly, so acceptance and tok/s look far better
than real traffic would give. The same happens whenever the output is degenerate.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.session import Trial

MIN_WORDS = 20  # shorter outputs say too little to call degenerate
UNIQUE_RATIO_FLOOR = 0.3
REPEATED_NGRAM_CEILING = 0.5
NGRAM = 4

_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Repetition:
    unique_ratio: float  # distinct words / words
    repeated_ngrams: float  # share of 4-grams that already appeared earlier in the same output


def repetition(text: str) -> Repetition | None:
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS:
        return None
    grams = [tuple(words[i : i + NGRAM]) for i in range(len(words) - NGRAM + 1)]
    return Repetition(len(set(words)) / len(words), 1.0 - len(set(grams)) / len(grams))


def looks_degenerate(texts: Sequence[str]) -> Repetition | None:
    """The median repetition of the outputs when it crosses a threshold, else None."""
    reps = [r for r in (repetition(t) for t in texts) if r is not None]
    if not reps:
        return None
    med = Repetition(
        statistics.median(r.unique_ratio for r in reps), statistics.median(r.repeated_ngrams for r in reps)
    )
    if med.unique_ratio < UNIQUE_RATIO_FLOOR or med.repeated_ngrams > REPEATED_NGRAM_CEILING:
        return med
    return None


def settings_caveats(temperature: float, ignore_eos: bool, repetitive_prompts: bool) -> list[tuple[str, str]]:
    """The caveats the settings alone give, before any output is seen: (what, the warning in full).
    Benchmarks say them in full, sweeps name them in one line; both from here."""
    out: list[tuple[str, str]] = []
    if temperature == 0 and ignore_eos:
        what = "temperature 0 with ignore_eos"
        out.append((what, f"{what}: greedy output runs past its natural end into repetition, "
                          "so speculative acceptance (and tok/s) is inflated compared with real traffic; "
                          "decide with temperature > 0 and the realistic prompts"))
    if repetitive_prompts:
        what = "repetitive prompt set"
        out.append((what, f"{what}: acceptance (and tok/s) is inflated by design; a stress test, not a tuning target"))
    return out


def settings_warnings(temperature: float, ignore_eos: bool, repetitive_prompts: bool) -> list[str]:
    return [full for _, full in settings_caveats(temperature, ignore_eos, repetitive_prompts)]


def sweep_warnings(temperature: float, ignore_eos: bool, repetitive_prompts: bool) -> list[str]:
    """A sweep picks its winner from benchmarks run under these settings: the same caveats, said of the
    winner in one line (the sweep screen has little room above its table at 80×24)."""
    caveats = settings_caveats(temperature, ignore_eos, repetitive_prompts)
    if not caveats:
        return []
    return [f"winner picked under settings that inflate acceptance (and tok/s): "
            f"{', '.join(what for what, _ in caveats)}; decide with temperature > 0 and the realistic prompts"]


def profile_sweep_warnings(profile: BenchProfile) -> list[str]:
    """`sweep_warnings` for the profile a sweep's trials ran with (the shipped "repetitive" set is the repetitive one)."""
    return sweep_warnings(profile.temperature, profile.ignore_eos, profile.prompts == "repetitive")


def trials_sweep_warnings(trials: Iterable[Trial]) -> list[str]:
    """What a sweep says of its winner: the caveats of the settings its trials really ran with, each once."""
    out: list[str] = []
    for trial in trials:
        out.extend(w for w in profile_sweep_warnings(trial.profile) if w not in out)
    return out


def content_warnings(
    temperature: float, ignore_eos: bool, repetitive_prompts: bool, texts: Sequence[str]
) -> list[str]:
    out = settings_warnings(temperature, ignore_eos, repetitive_prompts)
    rep = looks_degenerate(texts)
    if rep is not None:
        out.append(
            f"output looks degenerate (unique-word ratio {rep.unique_ratio:.2f}, "
            f"{rep.repeated_ngrams:.0%} repeated {NGRAM}-grams): the draft model predicts repetition "
            "easily, so acceptance (and tok/s) is inflated"
        )
    return out
