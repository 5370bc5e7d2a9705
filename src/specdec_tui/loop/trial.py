"""The trial loop: one owner for a trial from intent to record (push → restart → healthy → benchmark →
record, with rollback), for the panel and every headless command alike.

`TrialLoop` holds the busy state (`Busy`), the current trial, the benchmark run number and the session;
each intent is an async method that refuses in words when another step runs (`Refused`), emits
`loop.events` as it goes and records every outcome, failures included, before it returns. Nothing here
knows Textual: the panel runs an intent in a worker and renders the events; the CLI prints them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from specdec_tui.bench.events import BenchEvent, LevelDone, RunDone
from specdec_tui.core.compare import change_label
from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.results import ServerFacts
from specdec_tui.core.session import Session, SessionError, Trial, utcnow
from specdec_tui.core.trial_writer import this_writer
from specdec_tui.core.words import in_words
from specdec_tui.hosts.base import Host
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.busy import EventSink
from specdec_tui.loop.events import (
    BenchStarted,
    BenchUpdate,
    Phase,
    Pushed,
    SessionSaveChanged,
    StepFailed,
    TrialChanged,
    TrialEnded,
)
from specdec_tui.loop.health import HealthSnapshot, HealthWatch, NotHealthy
from specdec_tui.loop.session_saver import saver_for
from specdec_tui.loop.states import Busy, Step, UnitChange
from specdec_tui.loop.step_words import failure_text
from specdec_tui.loop.trial_host_steps import TrialHostSteps
from specdec_tui.loop.unit_checks import WorkflowError, api_key_from, check_unit

SAVE_WATCH_S = 0.2  # how often a background save's outcome is looked at while the writer has work

if TYPE_CHECKING:
    from specdec_tui.loop.sglang_release import Release


@dataclass
class TrialLoop(TrialHostSteps):
    """Drives one host through trials and keeps the session file up to date after every step."""

    host: Host
    session: Session
    profile: BenchProfile
    base_url: str
    session_path: Path | None = None
    api_key: str | None = None
    healthy_timeout_s: float = 900.0
    auto_rollback: bool = True
    save_in_background: bool = False  # the panel: the session file is written off its event loop (loop.session_saver)
    _unsaved: str = field(default="", init=False, repr=False)  # the session file's write failure, in words
    _save_watch: asyncio.Task[None] | None = field(default=None, init=False, repr=False)
    running_text: str | None = field(default=None, init=False)  # the unit as last read or pushed
    trial: Trial | None = field(default=None, init=False)  # pushed or being measured, not yet ended
    bench_run: int = field(default=0, init=False)  # number of the latest benchmark run
    facts: ServerFacts | None = field(default=None, init=False)  # what the server last said about itself
    _health: HealthWatch | None = field(default=None, init=False, repr=False)
    release: Release | None = field(default=None, init=False)  # the SGLang release that judges the unit

    @classmethod
    def for_host(cls, host: Host, config: Config, session: Session, *, host_name: str,
                 session_path: Path | None, profile: BenchProfile | None = None) -> TrialLoop:
        host_config = config.host_settings(host_name)
        return cls(
            host=host,
            session=session,
            profile=profile or config.profile(),
            base_url=host.info.base_url,
            session_path=session_path,
            api_key=api_key_from(host_config),
            healthy_timeout_s=host_config.healthy_timeout_s if host_config else 900.0,
            auto_rollback=config.ui.auto_rollback,
        )

    # ---------------------------------------------------------------- trials and the session

    def use_profile(self, profile: BenchProfile) -> None:
        """The load form's profile for the next benchmarks: a trial not yet measured takes it too."""
        self.profile = profile
        if self.trial is not None and not self.trial.levels and self.trial.status == "running":
            self.trial.profile = profile

    def start_trial(self, text: str, *, profile: BenchProfile | None = None, before: str | None = None) -> Trial:
        """A new trial of the unit `text`. Its label is what changed against `before`, the unit that ran before
        it (the host's unit a push replaces); without one (a benchmark of the unit as it is), against the last
        trial's unit, else "baseline"."""
        from specdec_tui.core.unit import UnitFile  # on first use: see loop.unit_checks

        flags = UnitFile.parse(text).flags()
        earlier = next((t.flags for t in reversed(self.session.trials) if t.host in ("", self.host.info.name)), None)
        previous = self._flags_of(before) if before is not None else None
        if previous is None:
            previous = earlier
        ignore = ("port",) if self.host.info.kind == "local" else ()  # the demo rewrites its port, no one else
        label = "baseline" if previous is None else change_label(previous, flags, ignore=ignore)
        if label == "same flags" and earlier is None:
            label = "baseline"  # the host's first trial, of the unit it ran: nothing changed yet
        trial = Trial(id=self.session.next_trial_id(), unit_text=text, flags=flags, profile=profile or self.profile,
                      label=label, host=self.host.info.name, writer=this_writer())
        if not self.session.trials:  # a session's [profile] is the one its trials ran, not a default no trial ran
            self.session.profile = trial.profile
        self.session.add(trial)
        return trial

    @staticmethod
    def _flags_of(text: str) -> dict[str, str | None] | None:
        from specdec_tui.core.unit import UnitFile, UnitSyntaxError

        try:
            return UnitFile.parse(text).flags()
        except UnitSyntaxError:
            return None

    def record(self, trial: Trial) -> None:
        """Put the trial in the session and save the file (a crash loses nothing finished): at once, or with
        `save_in_background` handed to the file's writer thread, which writes the newest state (the panel)."""
        self.session.add(trial)
        if self.session_path is not None:
            saver = saver_for(self.session_path)
            try:
                if self.save_in_background:
                    saver.save_soon(self.session)  # the panel: saves of one frame make one snapshot
                else:
                    saver.save(self.session)
                    saver.flush()
            except SessionError as err:  # the trial goes on; its results stay in memory and are saved when it can be
                self._say_save(str(err))
            else:
                if not self.save_in_background:
                    self._say_save("")
            if self.save_in_background and (self._save_watch is None or self._save_watch.done()):
                with contextlib.suppress(RuntimeError):  # no running event loop: the next save says a failure
                    self._save_watch = asyncio.get_running_loop().create_task(self._follow_saver(self.session_path))

    def _say_save(self, failure: str) -> None:
        """Say a failed save once per cause (not at every level), and the file written again after one."""
        if failure != self._unsaved and self.session_path is not None:
            self._unsaved = failure
            self.emit(SessionSaveChanged(self.session_path, failure))

    async def _follow_saver(self, path: Path) -> None:
        """While the file's writer has work (a background save, or a failed write it retries): its failure said
        when it happens, not at the next save (after a trial's last level there is none), and its recovery."""
        saver = saver_for(path)
        while True:
            await asyncio.sleep(SAVE_WATCH_S)
            failing = saver.failing
            self._say_save(failing)
            if not failing and saver.idle:
                return

    def _fail(self, trial: Trial, reason: str) -> None:
        trial.status, trial.failure = "failed", reason
        self._end(trial)

    def _end(self, trial: Trial) -> None:
        """The trial has its final status: save it, say so, and it is no longer the current one."""
        if trial.status == "running":
            trial.status = "ok"
        self.record(trial)
        if self.trial is trial:
            self.trial = None
        self.emit(TrialEnded(trial))

    def _note(self, trial: Trial, text: str) -> None:
        trial.notes = (trial.notes + " " if trial.notes else "") + text
        self.record(trial)

    # ---------------------------------------------------------------- intents

    async def push_and_restart(self, text: str, *, expected: str | None = None) -> Trial:
        """push → restart → healthy. The trial is recorded from the push on; a push that fails keeps
        nothing on the host (raises WorkflowError for an invalid edit before anything happens); a start
        that never turns healthy fails the trial and, with auto_rollback, restores the previous unit.
        `expected`: the host's unit the edit was made against (the panel's); the host's unit is read first and,
        changed since by someone else, nothing is pushed (UnitChangedElsewhere, after a `UnitLoaded` saying so);
        the demo's port rewrite alone is carried into the pushed text."""
        check_unit(text, (await self.learn_release(text)).schema)
        with self._claimed(Busy.PUSH):
            if expected is not None:
                text = await self._still_expected(text, expected)
            return await self._push_and_restart(text)

    async def _still_expected(self, text: str, expected: str) -> str:
        from specdec_tui.loop.unit_watch import UnitChangedElsewhere, with_port_of

        change = self.unit_seen(expected, await self.host.read_unit(), refused_push=True)
        if change is UnitChange.ELSEWHERE:
            raise UnitChangedElsewhere(f"the unit on {self.host.info.name} changed since it was read; nothing pushed")
        return with_port_of(text, self.running_text or "") if change is UnitChange.PORT else text

    async def _push_and_restart(self, text: str, *, profile: BenchProfile | None = None) -> Trial:
        if self.trial is not None and self.trial.status == "running":
            self._end(self.trial)  # pushed and healthy but never measured: it ends as it is
        before = self.running_text
        if before is None:
            try:
                before = await self.read_running()
            except HostError:
                before = None  # said by the push, which reads it too
        trial = self.trial = self.start_trial(text, profile=profile, before=before)
        self.emit(Phase("push", trial.label))
        try:
            result = await self.push(text)
        except (HostError, WorkflowError) as err:
            self._fail(trial, failure_text(Step.PUSH, in_words(err)))
            self.emit(StepFailed(Step.PUSH, in_words(err)))
            return trial
        trial.pushed_at = utcnow()
        self.record(trial)
        self.emit(Pushed(text, result, trial))
        await self._restart_for(trial, rollback=self.auto_rollback)
        return trial

    async def _restart_for(self, trial: Trial | None, *, rollback: bool) -> None:
        step = Step.RESTART
        try:
            snap = await self._restart_healthy()
        except (HostError, NotHealthy) as err:
            step = Step.HEALTHY if isinstance(err, NotHealthy) and "systemd could not" not in str(err) else step
            if trial is not None:
                self._fail(trial, failure_text(step, in_words(err)))
            self.emit(StepFailed(step, in_words(err)))
            if rollback:
                await self._roll_back_after_failure(trial)
            return
        if trial is not None:
            trial.facts = snap.facts or ServerFacts()
            await self.read_env_files(trial)
            self.record(trial)
            self.emit(TrialChanged(trial))

    async def restart(self) -> None:
        """restart → healthy on the unit as it is (a trial pushed but not measured fails if it cannot start)."""
        with self._claimed(Busy.RESTART):
            pending = self.trial if self.trial is not None and not self.trial.levels else None
            await self._restart_for(pending, rollback=False)

    async def start_service(self) -> None:
        """The demo service was not running at start: start it, as a real host's systemd would have."""
        with self._claimed(Busy.START):
            await self._restart_for(None, rollback=False)

    async def rollback(self) -> str | None:
        """Restore the previous unit, restart and wait healthy; None (and StepFailed) when it could not."""
        with self._claimed(Busy.ROLLBACK):
            self.emit(Phase("rollback", "restoring the previous unit"))
            try:
                return await self._rollback_healthy()
            except (HostError, NotHealthy) as err:
                self.emit(StepFailed(Step.ROLLBACK, in_words(err)))
                return None

    async def _roll_back_after_failure(self, trial: Trial | None) -> None:
        self.emit(Phase("rollback", "restoring the previous unit"))
        try:
            await self._rollback_healthy()
        except (HostError, NotHealthy) as err:
            self.emit(StepFailed(Step.ROLLBACK, in_words(err)))
            if trial is not None:
                self._note(trial, f"rollback did not bring the server back: {in_words(err)}")
            return
        if trial is not None:
            self._note(trial, "rolled back to the previous unit; it is healthy again")

    async def bench(self, trial: Trial | None = None, *, on_event: EventSink | None = None) -> Trial:
        """Benchmark the server as it runs now into `trial`, else the current trial, else a new one for the
        running unit; each level is saved as it lands. A run that ends in error, or a server that died
        under it, fails the trial with the reason; a cancel (the caller cancels the task) records it
        cancelled and re-raises."""
        with self._claimed(Busy.BENCH), self.listening(on_event):
            if trial is not None:
                self.trial = trial
            return await self._bench()

    async def _bench(self) -> Trial:
        trial = self.trial
        if trial is None or trial.levels or trial.status != "running":
            trial = self.trial = self.start_trial(self.running_text or await self.read_running())
            trial.facts = self.facts or trial.facts
            await self.read_env_files(trial)
        previous = next((t.levels for t in reversed(self.session.trials) if t.levels and t is not trial), None)
        self.bench_run += 1
        run = self.bench_run
        self.emit(Phase("bench"))
        open_loop = trial.profile.rate is not None
        if not open_loop and trial.profile.workload:  # imported here: the panel builds the loop before its first frame
            from specdec_tui.bench.request_plan import is_trace

            open_loop = is_trace(trial.profile)
        levels = (0,) if open_loop else tuple(trial.profile.concurrency)  # 0: one open-loop level (a rate or a trace)
        self.emit(BenchStarted(run, levels, list(previous) if previous else None, trial))
        try:
            async for event in self._bench_events(trial.profile):
                self.emit(BenchUpdate(run, event))
                if isinstance(event, LevelDone):
                    trial.levels.append(event.result)
                    self.record(trial)
                    self.emit(TrialChanged(trial))
                elif isinstance(event, RunDone) and event.error:
                    trial.status, trial.failure = "failed", f"benchmark: {event.error}"
                elif isinstance(event, RunDone) and event.cancelled:
                    trial.status = "cancelled"
        except (asyncio.CancelledError, KeyboardInterrupt):
            trial.status = "cancelled"
            self.emit(BenchUpdate(run, RunDone(levels=list(trial.levels), cancelled=True)))
            self._end(trial)
            raise
        except Exception as err:  # noqa: BLE001 - the engine failing is the trial failing, in words
            trial.status, trial.failure = "failed", f"benchmark: {in_words(err)}"
        if trial.status == "failed":
            self.emit(StepFailed(Step.BENCH, trial.failure))
        elif trial.status == "running" and trial.errors:
            await self._check_server_survived(trial)
        self._end(trial)
        return trial

    def _bench_events(self, profile: BenchProfile) -> AsyncIterator[BenchEvent]:
        from specdec_tui.bench.engine import (
            run_benchmark,  # aiohttp loads with the first benchmark
        )

        return run_benchmark(self.base_url, profile, api_key=self.api_key)

    async def _check_server_survived(self, trial: Trial) -> None:
        """Requests failed: if the server itself is gone, the trial failed (its figures are not the config's)."""
        try:
            status = await self.host.status()
        except HostError:
            return
        if status.is_running:
            return
        why = status.result or status.sub_state or status.active_state
        line = await self.last_error_line()
        trial.status = "failed"
        trial.failure = f"the server stopped during the benchmark (unit {status.active_state}, {why})" + (
            f" — journal: {line}" if line else "")
        self.emit(StepFailed(Step.BENCH, trial.failure))

    async def run_trial(self, text: str, *, profile: BenchProfile | None = None, run_bench: bool = True,
                        on_event: EventSink | None = None) -> Trial:
        """push → restart → healthy → bench → record, as the panel's p then b. Never raises for a failed
        trial; raises WorkflowError only when the edit itself is invalid, Refused when busy."""
        check_unit(text, (await self.learn_release(text)).schema)
        with self._claimed(Busy.PUSH), self.listening(on_event):
            try:
                trial = await self._push_and_restart(text, profile=profile)
                if run_bench and trial.status == "running":
                    if self.busy is Busy.PUSH:
                        self._set_busy(Busy.BENCH)
                    trial = await self._bench()
                elif trial.status == "running":
                    self._end(trial)
            except (asyncio.CancelledError, KeyboardInterrupt):
                current = self.trial
                if current is not None and current.status == "running":
                    current.status = "cancelled"
                    self._end(current)
                raise
            self.emit(Phase("done", trial.status))
            return trial

    def end_unmeasured(self) -> None:
        """The panel goes: a trial pushed and never measured ends as it is (as the next push would end it), not
        left "running" in the session file of a panel that no longer runs (seen in the newcomer pass)."""
        trial = self.trial
        if trial is not None and trial.status == "running" and self.busy is Busy.IDLE:
            self._end(trial)

    async def restart_healthy(self) -> HealthSnapshot:
        """restart → healthy for a sweep/replay putting a unit back; raises NotHealthy/HostError in words."""
        with self._claimed(Busy.RESTART):
            return await self._restart_healthy()
