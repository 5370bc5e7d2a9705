"""A session's sweeps, each on its own: which trials one sweep ran, by value.

Why: a session can hold several sweeps of one flag (steps over topk 2, then steps over topk 1); merged by flag they
read as one sweep with 3/0 runs of a value, its capacity from one sweep and its high concurrency from another.
A sweep trial records its sweep's number (`Trial.sweep["id"]`, given when the sweep starts: `next_sweep_id`).
Files written before that carry none: their sweeps are told apart by what else the unit ran (every flag but the
swept one, the draft tokens a sweep rewrites with it, and where the server listens).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from specdec_tui.core.session import Trial

_NOT_THE_SETTING = frozenset({"speculative-num-draft-tokens", "port", "host"})


@dataclass(slots=True)
class SweepRun:
    """One sweep: its flag, its number in the session (1, 2, ...) and its trials by value, in run order."""

    flag: str
    number: int
    by_value: dict[str, list[Trial]] = field(default_factory=dict)

    @property
    def concurrency(self) -> tuple[int, ...]:
        """The levels its benchmark was to measure (its trials' profile), known before any is measured."""
        levels = {c for trials in self.by_value.values() for t in trials for c in t.profile.concurrency}
        return tuple(sorted(levels))


def next_sweep_id(trials: Sequence[Trial]) -> int:
    """The number a new sweep in this session gets."""
    return 1 + max((int(t.sweep["id"]) for t in trials if isinstance(t.sweep.get("id"), int)), default=0)


def _key(trial: Trial) -> tuple[object, ...]:
    flag = str(trial.sweep["flag"])
    if isinstance(trial.sweep.get("id"), int):
        return ("id", trial.sweep["id"])
    rest = tuple(sorted((k, v or "") for k, v in trial.flags.items() if k != flag and k not in _NOT_THE_SETTING))
    return ("flags", flag, rest)


def separate_sweeps(trials: Sequence[Trial]) -> list[SweepRun]:
    """Every sweep of `trials`, in the order each began."""
    runs: dict[tuple[object, ...], SweepRun] = {}
    for t in trials:
        if not (t.sweep and "flag" in t.sweep and "value" in t.sweep):
            continue
        run = runs.setdefault(_key(t), SweepRun(str(t.sweep["flag"]), len(runs) + 1))
        run.by_value.setdefault(str(t.sweep["value"]), []).append(t)
    return list(runs.values())
