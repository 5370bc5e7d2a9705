"""Comparing trials: two side by side (flags diff, per-concurrency figures, delta %) or all at once.

Pure functions over `Session`/`Trial`, shared by the UI's compare screen, `session show` and the
Markdown report, so every view computes deltas the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Protocol, TypeVar

from specdec_tui.core.confidence import DEFAULT_RUN_NOISE, RunNoise, Verdict, compare_samples, measured_run_noise
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.latency import LatencyLimit, trial_limit, trial_pick
from specdec_tui.core.profile_words import settings_words, short_settings
from specdec_tui.core.redact import redact_flags
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.terminal_codes import terminal_safe

# The most of a label a table cell shows: a label is as long as a pasted flag value can make it (100 KB), and
# one that long pushed every other column off the panel's Trials list.
LABEL_WIDTH = 60


def delta_pct(old: float | None, new: float | None) -> float | None:
    """Relative change in percent; None when either side is missing or the base is zero."""
    if old is None or new is None or old == 0:
        return None
    return (new - old) / old * 100.0


@dataclass(frozen=True, slots=True)
class FlagDiff:
    name: str
    old: str | None  # "∅" style absence is None with present=False
    new: str | None
    old_present: bool
    new_present: bool

    def describe(self) -> str:
        def show(value: str | None, present: bool) -> str:
            return "(absent)" if not present else ("(switch)" if value is None else value)

        return f"--{self.name}: {show(self.old, self.old_present)} → {show(self.new, self.new_present)}"


def flag_diff(a: dict[str, str | None], b: dict[str, str | None]) -> list[FlagDiff]:
    out = []
    for name in dict.fromkeys([*a, *b]):
        if (name in a) != (name in b) or a.get(name) != b.get(name):
            out.append(FlagDiff(name, a.get(name), b.get(name), name in a, name in b))
    return out


@dataclass(frozen=True, slots=True)
class LevelComparison:
    concurrency: int
    a: LevelResult | None
    b: LevelResult | None

    @property
    def tok_s_delta_pct(self) -> float | None:
        return delta_pct(self.a.output_tok_s if self.a else None, self.b.output_tok_s if self.b else None)

    @property
    def per_request_delta_pct(self) -> float | None:
        return delta_pct(self.a.per_request_tok_s.p50 if self.a else None, self.b.per_request_tok_s.p50 if self.b else None)

    @property
    def ttft_delta_pct(self) -> float | None:
        return delta_pct(self.a.ttft_ms.p50 if self.a else None, self.b.ttft_ms.p50 if self.b else None)

    def verdict(self) -> Verdict:
        """Per-request tok/s, A against B, with bootstrap intervals over the level's requests."""
        return compare_samples("per-request tok/s", "A", self.a.tok_s_samples if self.a else [],
                               "B", self.b.tok_s_samples if self.b else [], unit=" tok/s")


@dataclass(frozen=True, slots=True)
class TrialComparison:
    a: Trial
    b: Trial
    flags: list[FlagDiff]
    levels: list[LevelComparison]

    @property
    def max_running_requests(self) -> tuple[int | None, int | None]:
        return (self.a.facts.max_running_requests if self.a.facts else None,
                self.b.facts.max_running_requests if self.b.facts else None)

    @property
    def limits(self) -> tuple[LatencyLimit, LatencyLimit]:
        return trial_limit(self.a), trial_limit(self.b)

    def queueing(self, level: LevelComparison) -> str:
        """"A queues: >21 running, B queues: >17 running" for the sides that queued at this level, else ""."""
        limit_a, limit_b = self.limits
        notes = [(side, limit.note(level.concurrency)) for side, limit, lv in
                 (("A", limit_a, level.a), ("B", limit_b, level.b)) if lv is not None]
        return ", ".join(f"{side} {note}" for side, note in notes if note)

    def header(self) -> list[str]:
        """Which trial is A and which is B, before anything says "A" or "B": id, name, status, host, when."""
        lines = []
        for side, t in (("A", self.a), ("B", self.b)):
            when = t.pushed_at or t.started_at
            where = [t.status] + ([f"on {t.host}"] if t.host else []) + (
                [when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")] if when else [])
            lines.append(f"{side} = trial {t.id} {trial_label(t)} ({', '.join(where)})")
        return lines

    def confidence_lines(self) -> list[str]:
        """Per level: the 95 % intervals and whether they tell a winner (levels both sides ran)."""
        return [f"c={lv.concurrency}: {lv.verdict().text}" for lv in self.levels if lv.a is not None and lv.b is not None]

    def latency_lines(self) -> list[str]:
        """Each side's best level within its TTFT limit and what its peak cost, with the settings it ran."""
        return [f"{side} trial {t.id} ({short_settings(t.profile)}): {trial_pick(t).summary()}"
                for side, t in (("A", self.a), ("B", self.b))]


def compare_trials(a: Trial, b: Trial) -> TrialComparison:
    concurrencies = sorted({lv.concurrency for lv in a.levels} | {lv.concurrency for lv in b.levels})
    return TrialComparison(
        a=a,
        b=b,
        flags=flag_diff(a.flags, b.flags),
        levels=[LevelComparison(c, a.level(c), b.level(c)) for c in concurrencies],
    )


def concurrencies_of(session: Session) -> list[int]:
    return sorted({lv.concurrency for t in session.trials for lv in t.levels})


_ABSENT = "\x00absent"  # not a value a unit can hold: a flag the unit does not have


def short_flag(name: str) -> str:
    """`speculative-num-steps` → `steps`, for trial labels that fit a chart legend."""
    short = name.removeprefix("speculative-").removeprefix("num-")
    return {"eagle-topk": "topk", "draft-tokens": "draft"}.get(short, short)


def change_label(previous: dict[str, str | None] | None, flags: dict[str, str | None], *,
                 ignore: Collection[str] = ()) -> str:
    """A short name for a trial: every flag that differs from the unit that ran before it, e.g. `steps=3 draft=4`
    (a switch turned on `x=on`, off `x=off`; a flag with a value taken out `x removed`, so SGLang's default
    runs). `ignore`: flags the tool itself rewrites (a demo host's --port), which no one changed. A secret's
    change is named, never its value (`api-key=<redacted>`): a label is saved and shown everywhere."""
    shown = redact_flags(flags)
    if previous is None:
        steps = flags.get("speculative-num-steps")
        return f"steps={steps}" if steps is not None else "baseline"
    parts = []
    for name in dict.fromkeys([*previous, *flags]):
        if name in ignore:
            continue
        old, new = previous.get(name, _ABSENT), flags.get(name, _ABSENT)
        if old == new:
            continue
        if new is _ABSENT:
            parts.append(f"{short_flag(name)}=off" if old is None else f"{short_flag(name)} removed")
        else:
            value = shown.get(name)
            parts.append(f"{short_flag(name)}={'on' if value is None else value}")
    return " ".join(parts) or "same flags"


class Named(Protocol):
    """A trial, or its headline (`core.session_index`): what its name is made of."""

    @property
    def id(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def flags(self) -> dict[str, str | None]: ...


class _TokS(Protocol):
    @property
    def output_tok_s(self) -> float: ...


class Scored(Named, Protocol):
    """A trial, or its headline: what picks the best one."""

    @property
    def status(self) -> str: ...
    def level(self, concurrency: int) -> _TokS | None: ...


ScoredT = TypeVar("ScoredT", bound=Scored)


def trial_label(trial: Named, previous: Named | None = None) -> str:
    """The one name a trial goes by: its label, else what it changed against `previous`, else `trial N`."""
    if trial.label:
        return trial.label
    return change_label(previous.flags, trial.flags) if previous is not None else f"trial {trial.id}"


def shown_label(trial: Named, previous: Named | None = None, width: int = LABEL_WIDTH) -> str:
    """`trial_label` as a screen or a table shows it: words only, cut to `width` with "…" (exports and the
    session file keep it whole)."""
    label = trial_label(trial, previous)
    if len(label) > width:
        label = label[:width * 4]  # enough to leave `width` characters once the escapes are removed
    label = terminal_safe(label)
    return label if len(label) <= width else label[:width - 1] + "…"


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One trial in the all-trials table: status, capacity and tok/s per concurrency."""

    trial: Trial
    tok_s: dict[int, float | None]
    max_running_requests: int | None
    accept_length: float | None
    errors: int


def summary_rows(session: Session) -> list[SummaryRow]:
    cs = concurrencies_of(session)
    rows = []
    for trial in session.trials:
        accept = next((lv.accept_length_server or lv.accept_length_client for lv in trial.levels
                       if (lv.accept_length_server or lv.accept_length_client)), None)
        rows.append(SummaryRow(
            trial=trial,
            tok_s={c: (lv.output_tok_s if (lv := trial.level(c)) and lv.measured else None) for c in cs},
            max_running_requests=trial.facts.max_running_requests if trial.facts else None,
            accept_length=accept,
            errors=trial.errors,
        ))
    return rows


def best_by_concurrency(session: Session, concurrency: int) -> Trial | None:
    """The ok trial with the highest aggregate tok/s at one concurrency."""
    return best_of(session.trials, concurrency)


def best_of(trials: Sequence[ScoredT], concurrency: int) -> ScoredT | None:
    """`best_by_concurrency` of trials or of their headlines (`session show` of thousands reads those)."""
    scored = [(lv.output_tok_s, t) for t in trials if t.status == "ok" and (lv := t.level(concurrency))]
    return max(scored, key=lambda pair: pair[0])[1] if scored else None


def session_run_noise(session: Session, concurrency: int) -> RunNoise:
    """The run-to-run scatter the session measured at `concurrency` — its ok trials of one unit on one host by one
    profile, run more than once — else the default (core.confidence)."""
    runs: dict[tuple[str, str, BenchProfile], list[float]] = {}
    for t in session.trials:
        if t.status == "ok" and (lv := t.level(concurrency)) is not None:
            runs.setdefault((t.host, t.unit_text, t.profile), []).append(lv.output_tok_s)
    return measured_run_noise(runs.values()) or DEFAULT_RUN_NOISE


def best_confidence(session: Session, concurrency: int) -> str:
    """The best trial at `concurrency` against the runner-up there, with 95 % intervals over requests: whether the
    report's "best" is told apart from the noise ("" when fewer than two ok trials measured the level)."""
    scored = sorted(((lv.output_tok_s, t) for t in session.trials if t.status == "ok" and (lv := t.level(concurrency))),
                    key=lambda pair: -pair[0])
    if len(scored) < 2:
        return ""
    (_, best), (_, runner) = scored[0], scored[1]
    a, b = best.level(concurrency), runner.level(concurrency)
    v = compare_samples("per-request tok/s", f"#{best.id}", a.tok_s_samples if a else [], f"#{runner.id}",
                        b.tok_s_samples if b else [], unit=" tok/s", noise=session_run_noise(session, concurrency))
    return f"c={concurrency}: best #{best.id} {trial_label(best)} against #{runner.id} {trial_label(runner)}: {v.text}"


def flags_text(flags: dict[str, str | None]) -> str:
    """A unit's flags as the command line writes them (`--name value`, a switch bare)."""
    return " ".join(f"--{k}" if v is None else f"--{k} {v}" for k, v in flags.items())


@dataclass(frozen=True, slots=True)
class TrialNotes:
    """What a report says of one trial beside its numbers: its flags (the first trial) or what it changed, the
    settings it ran with, why it failed, and its levels' warnings. The Markdown and HTML reports render these."""

    trial: Trial
    first: bool  # True: `change` holds all of the trial's flags, not a change
    change: str
    settings: str
    failure: str
    warnings: list[str]


def trial_notes(session: Session) -> list[TrialNotes]:
    notes: list[TrialNotes] = []
    previous: Trial | None = None
    for trial in session.trials:
        if previous is None:
            change = flags_text(trial.flags)
        else:
            change = ", ".join(d.describe() for d in flag_diff(previous.flags, trial.flags)) or "no flag change"
        notes.append(TrialNotes(trial, previous is None, change, settings_words(trial.profile), trial.failure,
                                sorted({w for lv in trial.levels for w in lv.warnings})))
        previous = trial
    return notes


def chart_series(trials: list[Trial], running: Trial | None, compared_id: int | None, *,
                 measuring: bool = False) -> list[tuple[str, list[LevelResult]]]:
    """The Bench tab's curves: the trial being measured (`running`, or the newest measured one), and beside it the
    trial the operator compares it with (`compared_id`, the Trials tab's cursor; else the one before it). While
    `running` is `measuring` and no level of it has finished, it comes last with no levels: the chart says so."""
    measured = [t for t in trials if t.levels]
    starting: list[tuple[str, list[LevelResult]]] = ([(f"#{running.id} {trial_label(running)} (running)", [])]
                if measuring and running is not None and not running.levels else [])
    current = running if running is not None and running.levels else (measured[-1] if measured else None)
    if current is None:
        return starting
    chosen = next((t for t in measured if t.id == compared_id and t is not current), None)
    before = [t for t in measured if t is not current and t.id < current.id]
    other = chosen or (before[-1] if before else None)
    live = " (running)" if current is running else ""
    series = [(f"#{other.id} {trial_label(other)}", list(other.levels))] if other is not None else []
    return [*series, (f"#{current.id} {trial_label(current)}{live}", list(current.levels)), *starting]
