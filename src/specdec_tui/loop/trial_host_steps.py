"""The trial loop's host steps: read and push the unit, restart, wait healthy, roll back, learn the host's SGLang
release. `loop.trial.TrialLoop` holds the fields named here and builds trials and the session on these steps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from specdec_tui.core.results import ServerFacts
from specdec_tui.core.session import Trial
from specdec_tui.core.words import in_words
from specdec_tui.hosts.base import FileReader, Host, PushResult, RestartResult
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.busy import BusyState, Refused
from specdec_tui.loop.events import Healthy, Phase, ReleaseLearned, Restarted, RolledBack, UnitLoaded
from specdec_tui.loop.health import HealthSnapshot, HealthWatch, NotHealthy
from specdec_tui.loop.states import Busy, UnitChange
from specdec_tui.loop.unit_push import checked_push

if TYPE_CHECKING:
    from specdec_tui.loop.sglang_release import Release


class TrialHostSteps(BusyState):
    """The steps on the host a trial is made of; `TrialLoop` (a dataclass) declares and sets these fields."""

    host: Host
    base_url: str
    api_key: str | None
    healthy_timeout_s: float
    running_text: str | None
    facts: ServerFacts | None
    _health: HealthWatch | None
    release: Release | None

    def refusal(self, what: Busy) -> str | None:
        """The loop's own busy state first; idle, a sweep or tune that holds this host through another loop (another
        of this panel's tasks' hosts, another terminal's `specdec-tui sweep`) refuses it too (`loop.host_hold`)."""
        why = super().refusal(what)
        if why is not None or self.busy is not Busy.IDLE:
            return why
        from specdec_tui.loop.host_hold import holder_of

        holder = holder_of(self.host.info)
        return None if holder is None else f"Not a {what.value}: {holder.words(self.host.info.name)}"

    @contextmanager
    def task_hold(self, what: Busy) -> Iterator[None]:
        """A task holds its host for as long as it runs, for every other loop on it in any process (the lock is
        let go when the task ends, fails or is cancelled, and by the kernel if the process dies)."""
        from specdec_tui.loop.host_hold import HostHeld, holding

        try:
            with holding(self.host.info, what.value):
                yield
        except HostHeld as held:
            raise Refused(f"Not a {what.value}: {held.holder.words(self.host.info.name)}") from None

    @property
    def health(self) -> HealthWatch:
        """The host's one health poller: the panel's watch and a restart's wait share it."""
        if self._health is None:
            self._health = HealthWatch(self.host, self.base_url, api_key=self.api_key)
        return self._health

    async def read_running(self) -> str:
        self.running_text = await self.host.read_unit()
        return self.running_text

    async def load_running(self) -> str:
        """Read the unit the host runs now and say so (after connect, a sweep or a replay)."""
        text = await self.read_running()
        self.emit(UnitLoaded(text))
        return text

    async def read_env_files(self, trial: Trial) -> None:
        """Record in `trial` what its unit's EnvironmentFile=s hold that changes behaviour (core/provenance.py), read
        on the host now — after the restart that read them, or for a benchmark of the unit as it runs. Never raises:
        a file that cannot be read is recorded as such."""
        from specdec_tui.core.provenance import behaviour_vars, env_file_paths, env_file_vars

        paths = env_file_paths(trial.unit_text)
        trial.file_env, trial.env_files = {}, {}
        for path, optional in paths:
            if not isinstance(self.host, FileReader):
                trial.env_files[path] = "not read (this host cannot read files)"
                continue
            try:
                data = await self.host.read_file(path)
            except HostError as err:
                trial.env_files[path] = "absent (optional)" if optional else f"not read: {in_words(err)}"
                continue
            trial.file_env.update(behaviour_vars(env_file_vars(data.decode("utf-8", "replace"))))
            trial.env_files[path] = "read"

    async def check_unit(self) -> UnitChange:
        """Read the host's unit again (the panel's periodic check, on focus): changed outside this loop, the new
        text becomes the running one and a `UnitLoaded` says how (`loop.unit_watch`). Never while a step of this
        loop runs (its own pushes change the unit) nor when one changed it during the read."""
        before = self.running_text
        if self.busy is not Busy.IDLE or before is None:
            return UnitChange.SAME
        now = await self.host.read_unit()
        if self.busy is not Busy.IDLE or self.running_text != before:
            return UnitChange.SAME
        return self.unit_seen(before, now)

    def unit_seen(self, before: str, now: str, *, refused_push: bool = False) -> UnitChange:
        """`now` was read from the host where `before` was expected: say how it changed (nothing when it did not)."""
        from specdec_tui.loop.unit_watch import unit_change

        change = unit_change(before, now, port_rewrites=self.host.info.kind == "local")
        self.running_text = now
        if change is not UnitChange.SAME:
            self.emit(UnitLoaded(now, change, refused_push=refused_push and change is UnitChange.ELSEWHERE))
        return change

    async def learn_release(self, text: str | None = None) -> Release:
        """The host's SGLang release (asked once per loop; see loop/sglang_release.py), for its checks."""
        if self.release is None:  # imported here: the panel builds its loop before its first frame
            from specdec_tui.core.exec_start import ExecStart
            from specdec_tui.core.unit import UnitFile
            from specdec_tui.core.unit_errors import UnitSyntaxError
            from specdec_tui.loop.sglang_release import learn_release

            try:
                exec_start = UnitFile.parse(text or self.running_text or await self.host.read_unit()).exec_start
            except UnitSyntaxError:
                exec_start = ExecStart("", [])
            served = self.facts.version if self.facts is not None and self.facts.version else None
            self.release = await learn_release(self.host, exec_start, version=served)  # /server_info's, once it serves
            self.emit(ReleaseLearned(self.release.version, self.release.source, self.release.note, self.release.schema))
        return self.release

    async def push(self, text: str) -> PushResult:
        """Push under the rules (`loop.unit_push`: a session file's hidden keys come from the unit on the host),
        judged by the host's SGLang release."""
        schema = (await self.learn_release(text)).schema
        self.running_text, result = await checked_push(self.host, text, running=self.running_text or None,
                                                       schema=schema)
        return result

    async def wait_healthy(self, timeout_s: float | None = None) -> HealthSnapshot:
        """Wait for READY; on failure raise NotHealthy whose message carries the journal's error line."""
        try:
            snap = await self.health.wait_ready(timeout_s or self.healthy_timeout_s)
        except NotHealthy as err:
            line = await self.last_error_line()
            if line:
                raise NotHealthy(err.snapshot, f"{err} — journal: {line}") from None
            raise
        snap = self._as_configured(snap)
        self.facts = snap.facts or self.facts
        return snap

    async def watch_health(self) -> AsyncIterator[HealthSnapshot]:
        """The health watch an operator sees; the facts of the latest READY go into the next trial."""
        async for snap in self.health.changes():
            snap = self._as_configured(snap)
            if snap.facts is not None:
                self.facts = snap.facts
            yield snap

    def _as_configured(self, snap: HealthSnapshot) -> HealthSnapshot:
        """The server's facts with the algorithm the running unit names (the server reports SGLang's rewrite of
        it: NEXTN as EAGLE), so every place that shows them says what the operator configured."""
        if snap.facts is None or not self.running_text:
            return snap
        from specdec_tui.core.unit import UnitFile  # lazily, like learn_release: not on the first frame's path

        try:
            configured = UnitFile.parse(self.running_text).get_flag("--speculative-algorithm") or ""
        except ValueError:  # UnitSyntaxError: the server's own name stands
            return snap
        if configured == snap.facts.configured_algorithm:
            return snap
        return replace(snap, facts=replace(snap.facts, configured_algorithm=configured))

    async def last_error_line(self, lines: int = 400) -> str | None:
        """Why the last start failed, from the unit's journal (`loop.start_failure`; its SGLang log parser is
        imported here, not with the loop: the panel builds the loop before its first frame)."""
        from specdec_tui.loop.start_failure import start_failure_cause

        return await start_failure_cause(self.host, lines)

    async def _restart_healthy(self, *, phases: bool = True) -> HealthSnapshot:
        """restart → healthy; raises NotHealthy (with the journal's cause) or HostError. `phases` False
        inside a rollback, which is one phase of its own."""
        if phases:
            self.emit(Phase("restart"))
        result: RestartResult = await self.host.restart()
        self.emit(Restarted(result, self.healthy_timeout_s))
        if not result.ok:
            line = await self.last_error_line()
            raise NotHealthy(None, f"systemd could not restart the unit (job {result.job_result}, state "
                                   f"{result.status.active_state})" + (f" — journal: {line}" if line else
                                                                       "; see the journal tab"))
        if phases:
            self.emit(Phase("wait", "waiting for /health"))
        snap = await self.wait_healthy()
        self.emit(Healthy(snap.facts))
        return snap

    async def _rollback_healthy(self) -> str:
        text = await self.host.rollback()
        self.running_text = text
        self.emit(RolledBack(text))
        await self._restart_healthy(phases=False)
        return text
