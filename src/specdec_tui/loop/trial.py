"""One trial of the tuning loop: push → restart → healthy → benchmark → record, with a rollback policy.

The UI calls the steps one by one (each is a key); the headless commands, the sweep and replay call
`run_trial`. None of them talks to asyncssh or httpx directly — they go through here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import AsyncIterator, Callable

from specdec_tui.core.config import BenchProfile, Config, HostConfig
from specdec_tui.core.flags import validate
from specdec_tui.core.redact import has_redacted, restore_secrets
from specdec_tui.core.results import ServerFacts
from specdec_tui.core.session import Session, Trial, save_session
from specdec_tui.core.sglang.parse import parse_line
from specdec_tui.core.sglang.records import ErrorRecord, cause_rank
from specdec_tui.core.unit import UnitFile, UnitSyntaxError
from specdec_tui.hosts.base import Host, HostError, PushResult, RestartResult
from specdec_tui.loop.health import HealthSnapshot, NotHealthy, wait_ready


class WorkflowError(Exception):
    """A step of the loop refused or failed; the message says what and what to do."""


@dataclass(frozen=True, slots=True)
class Phase:
    """Progress of `run_trial` for headless output: push, restart, wait, bench, rollback, done."""

    name: str
    detail: str = ""


def api_key_from(host_config: HostConfig | None) -> str | None:
    """The API key comes from the environment variable the config names; it is never stored."""
    if host_config is None or not host_config.api_key_env:
        return None
    return os.environ.get(host_config.api_key_env) or None


def check_unit(text: str) -> UnitFile:
    """Parse and validate an edited unit; raise WorkflowError listing the errors that block a push."""
    try:
        unit = UnitFile.parse(text)
    except UnitSyntaxError as err:
        raise WorkflowError(f"the unit does not parse: {err} — fix the raw unit before pushing") from err
    errors = [issue for issue in validate(unit.flags()) if issue.level == "error"]
    if errors:
        listed = "; ".join(issue.message for issue in errors)
        raise WorkflowError(f"the edit has {len(errors)} error(s) that block a push: {listed}")
    return unit


def short_flag(name: str) -> str:
    """`speculative-num-steps` → `steps`, for trial labels that fit a chart legend."""
    short = name.removeprefix("speculative-").removeprefix("num-")
    return {"eagle-topk": "topk", "draft-tokens": "draft"}.get(short, short)


def change_label(previous: dict[str, str | None] | None, flags: dict[str, str | None]) -> str:
    """A short name for a trial: the flags that differ from the previous trial, e.g. `steps=3 draft=4`."""
    if previous is None:
        steps = flags.get("speculative-num-steps")
        return f"steps={steps}" if steps is not None else "baseline"
    parts = []
    for name in dict.fromkeys([*previous, *flags]):
        old, new = previous.get(name, "∅"), flags.get(name, "∅")
        if old != new:
            parts.append(f"{short_flag(name)}={'off' if new == '∅' else ('on' if new is None else new)}")
    return " ".join(parts) or "same flags"


@dataclass
class TrialRunner:
    """Drives one host through trials and keeps the session file up to date after every step."""

    host: Host
    session: Session
    profile: BenchProfile
    base_url: str
    session_path: Path | None = None
    api_key: str | None = None
    healthy_timeout_s: float = 900.0
    auto_rollback: bool = True
    running_text: str | None = field(default=None, init=False)  # the unit as last read or pushed

    @classmethod
    def for_host(cls, host: Host, config: Config, session: Session, *, host_name: str,
                 session_path: Path | None, profile: BenchProfile | None = None) -> "TrialRunner":
        host_config = config.hosts.get(host_name)
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

    # ---------------------------------------------------------------- steps (one key each in the UI)

    async def read_running(self) -> str:
        self.running_text = await self.host.read_unit()
        return self.running_text

    async def push(self, text: str) -> PushResult:
        if has_redacted(text):  # a unit from a session file: its API key comes from the unit on the host
            text = restore_secrets(text, self.running_text or await self.host.read_unit())
        check_unit(text)
        result = await self.host.push(text)
        self.running_text = text
        return result

    async def restart(self) -> RestartResult:
        return await self.host.restart()

    async def wait_healthy(self, timeout_s: float | None = None) -> HealthSnapshot:
        """Wait for READY; on failure raise NotHealthy whose message carries the journal's error line."""
        try:
            return await wait_ready(self.host, self.base_url, timeout_s=timeout_s or self.healthy_timeout_s,
                                    api_key=self.api_key)
        except NotHealthy as err:
            line = await self.last_error_line()
            if line:
                raise NotHealthy(err.snapshot, f"{err} — journal: {line}") from None
            raise

    async def last_error_line(self, lines: int = 400) -> str | None:
        """Why the last start failed, from the unit's journal since systemd last started it.

        SGLang prints the cause (e.g. "Not enough memory") and then generic follow-ups ("Received sigquit
        from a child process"); the first specific error is the one worth showing."""
        errors: list[tuple[int, str]] = []
        try:
            async for record in self.host.journal(follow=False, lines=lines):
                message = record.message.strip()
                if message.startswith(("Started ", "Starting ")):
                    errors.clear()
                    continue
                parsed = parse_line(message)
                if isinstance(parsed, ErrorRecord) and parsed.fatal:
                    errors.append((cause_rank(parsed), message))
        except HostError:
            pass
        return min(errors, key=lambda pair: pair[0])[1] if errors else None  # min keeps the first of equals

    def bench(self, profile: BenchProfile | None = None) -> AsyncIterator[object]:
        from specdec_tui.bench.engine import run_benchmark

        return run_benchmark(self.base_url, profile or self.profile, api_key=self.api_key)

    async def rollback(self, *, restart: bool = True) -> str:
        """Restore the previous unit and (by default) restart on it."""
        text = await self.host.rollback()
        self.running_text = text
        if restart:
            await self.host.restart()
        return text

    # ---------------------------------------------------------------- trials and the session

    def start_trial(self, text: str, *, profile: BenchProfile | None = None) -> Trial:
        flags = UnitFile.parse(text).flags()
        previous = next((t.flags for t in reversed(self.session.trials) if t.status == "ok"), None)
        trial = Trial(id=self.session.next_trial_id(), unit_text=text, flags=flags,
                      profile=profile or self.profile, label=change_label(previous, flags))
        self.session.add(trial)
        return trial

    def record(self, trial: Trial) -> None:
        """Put the trial in the session and save the file now (a crash loses nothing finished)."""
        self.session.add(trial)
        if self.session_path is not None:
            save_session(self.session, self.session_path)

    async def run_trial(
        self,
        text: str,
        *,
        profile: BenchProfile | None = None,
        on_event: Callable[[object], None] | None = None,
        run_bench: bool = True,
    ) -> Trial:
        """push → restart → healthy → bench → record. A start that fails is recorded as failed and,
        with auto_rollback, the previous unit is restored and restarted. Never raises for a failed
        trial; raises WorkflowError only when the edit itself is invalid."""
        emit = on_event or (lambda _event: None)
        check_unit(text)
        trial = self.start_trial(text, profile=profile)
        try:
            emit(Phase("push", trial.label))
            await self.push(text)
            trial.pushed_at = datetime.now(timezone.utc).replace(microsecond=0)
            emit(Phase("restart"))
            result = await self.restart()
            if not result.ok:
                raise NotHealthy(None, f"systemd could not restart the unit (job {result.job_result}, "
                                       f"state {result.status.active_state})")
            emit(Phase("wait", "waiting for /health"))
            snap = await self.wait_healthy()
            trial.facts = snap.facts or ServerFacts()
            self.record(trial)
            if run_bench:
                emit(Phase("bench"))
                await self.bench_into(trial, emit)
            if trial.status == "running":
                trial.status = "ok"
        except (HostError, NotHealthy) as err:
            trial.status = "failed"
            trial.failure = str(err)
            self.record(trial)
            if self.auto_rollback and isinstance(err, NotHealthy):
                await self._roll_back_after_failure(trial, emit)
        except BaseException:
            trial.status = "cancelled"
            self.record(trial)
            raise
        self.record(trial)
        emit(Phase("done", trial.status))
        return trial

    async def bench_into(self, trial: Trial, emit: Callable[[object], None]) -> None:
        """Run the trial's profile, appending and saving each level as it finishes."""
        from specdec_tui.bench.events import LevelDone, RunDone

        async for event in self.bench(trial.profile):
            emit(event)
            if isinstance(event, LevelDone):
                trial.levels.append(event.result)
                self.record(trial)
            elif isinstance(event, RunDone):
                if event.cancelled:
                    trial.status = "cancelled"
                if event.error:
                    trial.status = "failed"
                    trial.failure = f"benchmark: {event.error}"
        if trial.status == "running" and trial.errors:
            await self._check_server_survived(trial)

    async def _check_server_survived(self, trial: Trial) -> None:
        """Requests failed: if the server itself is gone, the trial failed (its figures are not the config's)."""
        try:
            status = await self.host.status()
        except HostError:
            return
        if status.is_running:
            return
        trial.status = "failed"
        why = status.result or status.sub_state or status.active_state
        line = await self.last_error_line()
        trial.failure = f"the server stopped during the benchmark (unit {status.active_state}, {why})" + (
            f" — journal: {line}" if line else "")
        self.record(trial)

    async def _roll_back_after_failure(self, trial: Trial, emit: Callable[[object], None]) -> None:
        emit(Phase("rollback", "restoring the previous unit"))
        try:
            await self.rollback(restart=True)
            await self.wait_healthy()
            trial.notes = (trial.notes + " " if trial.notes else "") + "rolled back to the previous unit; it is healthy again"
        except (HostError, NotHealthy) as err:
            trial.notes = (trial.notes + " " if trial.notes else "") + f"rollback did not bring the server back: {err}"
        self.record(trial)
