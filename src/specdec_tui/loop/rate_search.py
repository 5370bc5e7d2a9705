"""The rate search as an intent of the trial loop (issue 33): the highest open-loop request rate at which the unit
running now meets the profile's SLO (`bench.rate_search`'s bisection), owning the loop while it probes.

Nothing is pushed: the running unit is measured. Its probes are recorded as one trial of the session (a level per
rate probed, labelled with the answer), so the chart draws them against the rate and the session keeps the search.
The panel's rate-search screen and `bench --find-max-rate` word a probe and the answer the same way
(`bench.rate_search.probe_words`, `RateSearch.words`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from specdec_tui.bench.events import BenchEvent, LevelDone
from specdec_tui.bench.rate_search import (
    MAX_PROBES,
    RateSearch,
    find_max_rate,
    met,
    probe_words,
    saturation_words,
)
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Trial, TrialStatus
from specdec_tui.core.slo import parse_slos
from specdec_tui.core.words import in_words
from specdec_tui.loop.events import BenchUpdate, Phase, TrialChanged, TrialEnded
from specdec_tui.loop.states import Busy
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError

EventSink = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class RateProbeStarted:
    """Probe `index` (0-based) of at most `max_probes` starts at `rate` requests/s."""

    index: int
    max_probes: int
    rate: float


@dataclass(frozen=True, slots=True)
class RateProbeDone:
    """A probe ended: its level, whether it met the SLO, the verdict in words, the bracket so far."""

    index: int
    level: LevelResult
    met: bool
    words: str
    met_at: float | None  # the highest rate met so far
    missed_at: float | None  # the lowest rate missed so far
    saturation: str  # the first saturation seen so far, in words ("" when none)


@dataclass(frozen=True, slots=True)
class RateSearchDone:
    search: RateSearch
    trial: Trial


@dataclass(slots=True)
class _Bracket:
    """The bracket so far, told with each probe (the bisection keeps its own)."""

    met_at: float | None = None
    missed_at: float | None = None
    saturation: str = ""

    def add(self, level: LevelResult) -> bool:
        rate = level.rate or 0.0
        ok = met(level)
        if ok:
            self.met_at = rate if self.met_at is None else max(self.met_at, rate)
        elif self.missed_at is None or rate < self.missed_at:
            self.missed_at = rate
        if level.saturated and not self.saturation:
            self.saturation = saturation_words(level)
        return ok


def slo_words(profile: BenchProfile) -> str:
    """"ttft_p90≤150ms, itl_p99≤50ms": the targets as the search reads them."""
    return ", ".join(t.text for t in parse_slos(profile.slo))


async def search_max_rate(runner: TrialLoop, profile: BenchProfile, *, on_event: EventSink | None = None,
                          max_probes: int = MAX_PROBES) -> RateSearch:
    """Probe the running unit for the highest rate meeting `profile.slo`; the probes become one trial of the session.
    Refused (in words) without an SLO or while the loop is busy; a cancel records the trial cancelled and re-raises."""
    if not profile.slo:
        raise WorkflowError("The rate search needs an SLO, e.g. ttft_p99=2s, itl_p99=50ms (set it in the load form).")
    emit = on_event or (lambda _event: None)
    with runner.task(Busy.RATE_SEARCH):
        trial = runner.start_trial(runner.running_text or await runner.read_running(), profile=profile)
        trial.label = f"rate search ({slo_words(profile)})"
        trial.facts = runner.facts or trial.facts
        runner.record(trial)
        bracket = _Bracket()

        def on_probe(index: int, rate: float) -> None:
            emit(RateProbeStarted(index, max_probes, rate))

        def on_bench(event: BenchEvent) -> None:
            emit(BenchUpdate(0, event))  # run 0: no bench table's run, the screen's own
            if isinstance(event, LevelDone):
                ok = bracket.add(event.result)
                trial.levels.append(event.result)
                runner.record(trial)
                runner.emit(TrialChanged(trial))
                emit(RateProbeDone(len(trial.levels) - 1, event.result, ok, probe_words(event.result), bracket.met_at,
                                   bracket.missed_at, bracket.saturation))

        runner.emit(Phase("bench", trial.label))
        try:
            search = await find_max_rate(runner.base_url, profile, on_bench, api_key=runner.api_key,
                                         max_probes=max_probes, on_probe=on_probe)
        except (asyncio.CancelledError, KeyboardInterrupt):
            _end(runner, trial, "cancelled")
            raise
        except Exception as err:  # noqa: BLE001 - the engine failing is the search failing, in words
            _end(runner, trial, "failed", f"rate search: {in_words(err)}")
            raise WorkflowError(f"The rate search stopped: {in_words(err)}") from err
        trial.notes = search.words()
        if search.max_rate is not None:
            trial.label = f"max rate ≈ {search.max_rate:.3g}/s ({slo_words(profile)})"
        _end(runner, trial, "ok")
        emit(RateSearchDone(search, trial))
        return search


def _end(runner: TrialLoop, trial: Trial, status: TrialStatus, failure: str = "") -> None:
    trial.status = status
    if failure:
        trial.failure = failure
    runner.record(trial)
    runner.emit(TrialEnded(trial))
