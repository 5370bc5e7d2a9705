"""The panel's link to one host: the workers that connect, follow the journal, watch health and run the
trial loop's intents. Each worker only posts `ui.messages`; it never touches a widget. A collaborator of
`SpecdecApp` (not a mixin): the app calls `connect()`, `push(text)`, `bench()`..., and renders what arrives.
It is handed only where its workers run and its messages go (`LinkWorkers`), not the app's state."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from textual.message import Message
from textual.worker import Worker

from specdec_tui.core.words import in_words
from specdec_tui.hosts.base import Host, JournalRecord
from specdec_tui.hosts.errors import HostError
from specdec_tui.loop.busy import Refused, UnitChangedElsewhere
from specdec_tui.loop.events import LoopEvent, StepFailed
from specdec_tui.loop.states import Step
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui import messages as m

UNIT_CHECK_S = 5.0  # how often the host's unit is read again while idle (one `cat` over the open connection)

if TYPE_CHECKING:  # the feed itself loads with the journal, after the first frame
    from textual.notifications import SeverityLevel

    from specdec_tui.loop.doctor import DoctorWatch
    from specdec_tui.loop.journal_feed import Pause


GAUGES_EVERY_S = 2.0  # how often the doctor reads /metrics


class HostLink:
    """Runs each host job in its own exclusive worker group: a new intent replaces nothing silently
    (the loop refuses while busy), the journal and health follow one host, the benchmark can be cancelled."""

    def __init__(self, app: LinkWorkers, host: Host, trial_loop: TrialLoop, *, journal_lines: int,
                 pause: Pause | None = None, show: Callable[[LoopEvent], None]) -> None:
        self.app = app  # only where workers run and messages go (LinkWorkers), not the panel's state
        self.show = show  # where the loop's events go (the app hands each to the screen that shows it)
        self.pause = pause  # between two slices of journal parsing (the app's: keys go first)
        self.host = host
        self.trial_loop = trial_loop
        self.journal_lines = journal_lines
        self.bench_worker: Worker[None] | None = None
        self.doctor: DoctorWatch | None = None  # built with the journal follow
        self.recovering = False  # a recovery's tries run: their failed starts are its to report, not dialogs
        self.unit_check_s = UNIT_CHECK_S
        trial_loop.sink = self.post_event

    def post_event(self, event: LoopEvent) -> None:
        if self.recovering and isinstance(event, StepFailed) and event.step in (Step.RESTART, Step.HEALTHY):
            return  # a recovery's try that did not come up: RecoveryEnded says so, with every try
        self.show(event)

    def _failed(self, step: Step, err: BaseException) -> None:
        self.post_event(StepFailed(step, in_words(err)))

    def _run(self, job: Coroutine[Any, Any, None], group: str) -> Worker[None]:
        return self.app.run_worker(job, group=group, exclusive=True, exit_on_error=False)

    # -- following the host --------------------------------------------------------------------
    def connect(self) -> None:
        self._run(self._connect(), "connect")

    async def _connect(self) -> None:
        try:
            await self.host.connect()
            await self.trial_loop.load_running()
        except HostError as err:
            self._failed(Step.CONNECT, err)
            return
        self._run(self._follow_journal(self.host.journal(follow=True, lines=min(self.journal_lines, 500))), "journal")
        self._run(self._watch_health(), "health")
        self._run(self._watch_gauges(), "gauges")
        self._run(self._learn_release(), "release")
        self._run(self._watch_unit(), "unit-watch")
        if self.host.info.kind != "local":
            return  # never start a production unit implicitly
        try:
            status = await self.host.status()
        except HostError as err:
            self._failed(Step.STATUS, err)
            return
        if status.active_state == "inactive":
            self.app.post_message(m.ServiceInactive(status))

    async def _learn_release(self) -> None:
        """The host's SGLang release, for the form's checks (a ReleaseLearned event; failures fall back inside)."""
        try:
            await self.trial_loop.learn_release()
        except HostError as err:
            self._failed(Step.CONNECT, err)

    async def _follow_journal(self, source: AsyncIterator[JournalRecord]) -> None:
        """Batches of parsed lines and the stats folded from them, parsed and formatted in a child process
        (`loop.journal_offload`; in slices on this loop if no child can start). The parser comes with the
        journal, after the first frame (the link is built before it)."""
        from specdec_tui.loop.doctor import DoctorWatch, FindingRaised
        from specdec_tui.loop.journal_feed import next_turn
        from specdec_tui.loop.journal_offload import offloaded_batches

        doctor = self.doctor = DoctorWatch()
        try:
            async for batch in offloaded_batches(source, pause=self.pause or next_turn):
                if batch.records:
                    self.app.post_message(m.JournalBatch(batch.records, batch.kinds, batch.lines))
                    for event in doctor.observe(batch.records, batch.kinds, self.trial_loop.running_text):
                        self.app.post_message(m.DoctorFindingRaised(event.finding) if isinstance(event, FindingRaised)
                                              else m.DoctorFindingCleared(event.kind))
                if batch.stats is not None:
                    self.app.post_message(m.LogStatsChanged(batch.stats))
        except Exception as err:  # noqa: BLE001 - a lost journal is said in words, the panel goes on
            self._failed(Step.JOURNAL, err)

    async def _watch_gauges(self) -> None:
        """/metrics every GAUGES_EVERY_S for the doctor (with the journal's records: a server that logs no decode
        lines still shows a queue behind a full batch there); a server without metrics answers None, said nowhere."""
        import asyncio
        from datetime import datetime

        # its HTTP client's modules load on a thread: imported here on the panel's loop they held it ~0.1–0.3 s
        # right after the first frame (py-spy, bench/sweep_keys.py); a thread gives keys their turns meanwhile
        await asyncio.to_thread(_load_http_client)
        import httpx

        from specdec_tui.loop.doctor import FindingRaised, gauges_from

        key = self.trial_loop.api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx.AsyncClient(headers=headers) as client:
            while True:
                await asyncio.sleep(GAUGES_EVERY_S)
                doctor = self.doctor
                if doctor is None:
                    continue
                gauges = await gauges_from(client, self.host.info.base_url)
                for event in doctor.observe_gauges(gauges, datetime.now().astimezone()):
                    self.app.post_message(m.DoctorFindingRaised(event.finding) if isinstance(event, FindingRaised)
                                          else m.DoctorFindingCleared(event.kind))

    async def _watch_health(self) -> None:
        try:
            async for snapshot in self.trial_loop.watch_health():
                self.app.post_message(m.HealthChanged(snapshot))
        except HostError as err:
            self._failed(Step.HEALTH, err)

    async def _watch_unit(self) -> None:
        """Every `unit_check_s` while idle, the host's unit is read again: a push from another terminal reaches the
        form (`TrialLoop.check_unit`). A failed read is left to the health watch, which says the host is gone."""
        while True:
            await asyncio.sleep(self.unit_check_s)
            with contextlib.suppress(HostError):
                await self.trial_loop.check_unit()

    def check_unit(self) -> None:
        """Read the host's unit again now (the terminal got the focus back)."""

        async def check() -> None:
            with contextlib.suppress(HostError):
                await self.trial_loop.check_unit()

        self._run(check(), "unit-check")

    def reload_unit(self) -> None:
        """After a sweep or replay: the Config tab follows the unit the host runs now."""

        async def read() -> None:
            try:
                await self.trial_loop.load_running()
            except HostError as err:
                self._failed(Step.CONNECT, err)

        self._run(read(), "reload-unit")

    # -- the loop's intents --------------------------------------------------------------------
    async def _intent(self, job: Coroutine[Any, Any, object], step: Step) -> None:
        """Run one intent; a refusal or an unexpected error reaches the user in words."""
        try:
            await job
        except UnitChangedElsewhere:
            return  # its UnitLoaded event has gone to the screen, which asks the operator
        except Refused as err:
            self.post_event(StepFailed(step, str(err)))
        except Exception as err:  # noqa: BLE001 - every failure becomes words for the user
            self._failed(step, err)

    def push(self, text: str, *, expected: str | None = None, what: str = "") -> None:
        """Push `text`, made against the host's unit `expected` (read again first: changed since, nothing is pushed
        and the screen asks). `what` names a push that is not the form's edit (a tune's choice): refused, it is said
        not pushed in words — the form, with no edit of its own, just follows the host's unit."""
        job = self._push_then_offer(text, expected)
        self._run(self._intent(self._said_if_refused(job, what) if what else job, Step.PUSH), "step")

    async def _said_if_refused(self, job: Coroutine[Any, Any, None], what: str) -> None:
        try:
            await job
        except UnitChangedElsewhere:
            self.app.notify(f"{what} was not pushed: the unit on {self.host.info.name} changed outside this panel "
                            "since it was made against it. The form shows the host's unit now; run it again or push "
                            "by hand.", title="Not pushed", severity="warning", timeout=20)
            raise

    async def _push_then_offer(self, text: str, expected: str | None = None) -> None:
        """Push and restart; a start that failed with a cause the ladder answers is offered to recover (asked)."""
        from specdec_tui.loop.recovery import offered_rung

        last_good = self.trial_loop.running_text
        trial = await self.trial_loop.push_and_restart(text, expected=expected)
        text = trial.unit_text  # what was pushed (the demo's port rewrite carried in)
        if trial.status == "failed" and trial.pushed_at is not None and not self.recovering:
            finding = await offered_rung(self.host, text, trial.pushed_at)
            if finding is not None:
                self.app.post_message(m.RecoveryOffered(finding, text, last_good))

    def recover(self, offer: m.RecoveryOffered) -> None:
        """The recovery the user accepted: at most two tries of the ladder, else back on the last good unit."""
        from specdec_tui.loop.recovery import recover_pushed

        async def run() -> None:
            self.recovering = True
            try:
                result = await recover_pushed(self.trial_loop, offer.failed_text, offer.finding, last_good=offer.last_good)
            finally:
                self.recovering = False
            self.app.post_message(m.RecoveryEnded(result))

        self._run(self._intent(run(), Step.PUSH), "step")

    def restart(self) -> None:
        self._run(self._intent(self._start_then_offer(self.trial_loop.restart()), Step.RESTART), "step")

    def start_service(self) -> None:
        self._run(self._intent(self._start_then_offer(self.trial_loop.start_service()), Step.RESTART), "step")

    async def _start_then_offer(self, job: Coroutine[Any, Any, None]) -> None:
        """A (re)start of the unit as it is; one that failed with a cause the ladder answers is offered to recover,
        back on the session's last unit that came up (if it has one) when the tries fail."""
        from datetime import UTC, datetime

        from specdec_tui.loop.recovery import last_good_unit, offered_rung

        since = datetime.now(UTC).replace(microsecond=0)
        await job
        if self.recovering:
            return
        text = await self.host.read_unit()  # the unit that failed: it may have changed outside the panel
        finding = await offered_rung(self.host, text, since)
        if finding is not None:
            self.app.post_message(m.RecoveryOffered(finding, text, last_good_unit(self.trial_loop.session.trials,
                                                                                     self.host.info.name, text)))

    def rollback(self) -> None:
        self._run(self._intent(self.trial_loop.rollback(), Step.ROLLBACK), "step")

    def bench(self) -> None:
        self.bench_worker = self._run(self._intent(self.trial_loop.bench(), Step.BENCH), "bench")

    def cancel_bench(self) -> Worker[None] | None:
        """Cancel the running benchmark; the loop records the trial cancelled and says so. Returns its worker (None if
        none ran), for a caller that must wait until the trial is recorded (`bench_cancelled`)."""
        worker, self.bench_worker = self.bench_worker, None
        if worker is not None:
            worker.cancel()
        return worker

    async def bench_cancelled(self) -> None:
        """Cancel the running benchmark and return once its trial is recorded cancelled and the loop is free: the
        engine's cancel closes its requests first, which can outlast a frame on a loaded machine."""
        from textual.worker import WorkerCancelled, WorkerFailed

        worker = self.cancel_bench()
        if worker is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()


class LinkWorkers(Protocol):
    """Where the link's workers run and its messages go: the app (any Textual `App` is one)."""

    def run_worker(self, work: Coroutine[Any, Any, None], *, group: str, exit_on_error: bool,
                   exclusive: bool) -> Worker[None]: ...
    def post_message(self, message: Message) -> bool: ...
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None) -> None: ...


def _load_http_client() -> None:
    """httpx with what its first async request loads (its transport's httpcore, the async-library probe)."""
    import importlib

    for name in ("httpx", "httpcore", "sniffio", "anyio", "specdec_tui.loop.doctor"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an optional backend httpcore does without
