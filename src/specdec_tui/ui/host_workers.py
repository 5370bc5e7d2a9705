"""The host side of `SpecdecApp` (mixed in): the `@work` workers that talk to the host, the workflow
and the benchmark. They only post `ui.messages`; the app's `@on` handlers own the state and the widgets,
so a worker never touches a widget and a late message after shutdown is dropped in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator

from textual import work
from textual.message import Message

from specdec_tui.bench.events import RunDone
from specdec_tui.core.config import Config
from specdec_tui.core.session import Trial
from specdec_tui.hosts.base import Host, HostError, JournalRecord
from specdec_tui.loop.journal_feed import parsed_batches
from specdec_tui.ui import messages as m
from specdec_tui.ui.session_actions import in_words


class HostWorkers:
    """connect, journal, health, push/restart/rollback and the benchmark, each a worker in its own
    exclusive group (a new push replaces a running one; the journal and health follow one host).

    Uses the app's state (host, config, trial), its `runner()` and `post_message`; the workers post
    `StepFailed` with the failure in words instead of raising."""

    host: Host | None
    config: Config
    trial: Trial | None

    if TYPE_CHECKING:
        def runner(self) -> Any: ...
        def post_message(self, message: Message) -> bool: ...

    @work(exclusive=True, group="connect")
    async def connect_host(self) -> None:
        assert self.host is not None
        try:
            await self.host.connect()
            text = await self.host.read_unit()
        except HostError as err:
            self.post_message(m.StepFailed("connect", in_words(err)))
            return
        self.post_message(m.UnitLoaded(text))
        self.tail_journal()
        self.watch_health()
        if self.host.info.kind != "local":
            return  # never start a production unit implicitly
        try:
            status = await self.host.status()
        except HostError as err:
            self.post_message(m.StepFailed("status", in_words(err)))
            return
        if status.active_state == "inactive":
            self.post_message(m.ServiceInactive(status))

    def tail_journal(self) -> None:
        assert self.host is not None
        self.follow_journal(self.host.journal(follow=True, lines=min(self.config.ui.journal_lines, 500)))

    @work(exclusive=True, group="journal")
    async def follow_journal(self, source: AsyncIterator[JournalRecord]) -> None:
        """Batches of parsed lines and the stats folded from them; parsing runs on a thread."""
        try:
            async for batch in parsed_batches(source):
                if batch.records:
                    self.post_message(m.JournalBatch(batch.records, batch.kinds))
                if batch.stats is not None:
                    self.post_message(m.LogStatsChanged(batch.stats))
        except Exception as err:  # noqa: BLE001 - a lost journal is said in words, the panel goes on
            self.post_message(m.StepFailed("journal", in_words(err)))

    @work(exclusive=True, group="health")
    async def watch_health(self) -> None:
        from specdec_tui.loop.health import watch_health

        assert self.host is not None
        try:
            async for snapshot in watch_health(self.host, self.host.info.base_url):
                self.post_message(m.HealthChanged(snapshot))
        except HostError as err:
            self.post_message(m.StepFailed("health", in_words(err)))

    @work(exclusive=True, group="step")
    async def push_and_restart(self, text: str) -> None:
        """push → restart → healthy; a start that never turns healthy is rolled back (auto_rollback)."""
        runner = self.runner()
        try:
            self.post_message(m.Pushed(text, await runner.push(text)))
        except Exception as err:  # noqa: BLE001 - every failure becomes words for the user
            self.post_message(m.StepFailed("push", in_words(err)))
            return
        await self._restart_until_healthy(rollback_on_failure=self.config.ui.auto_rollback)

    @work(exclusive=True, group="step")
    async def restart_only(self) -> None:
        await self._restart_until_healthy(rollback_on_failure=False)

    async def _restart_until_healthy(self, *, rollback_on_failure: bool) -> None:
        runner = self.runner()
        step = "restart"
        try:
            result = await runner.restart()
            self.post_message(m.Restarted(result))
            if not result.ok:
                raise HostError(f"systemd could not restart the unit (job {result.job_result}, state {result.status.active_state})", "see the journal tab")
            step = "healthy"
            snapshot = await runner.wait_healthy()
            self.post_message(m.Healthy(snapshot.facts))
        except Exception as err:  # noqa: BLE001
            self.post_message(m.StepFailed(step, in_words(err)))
            if rollback_on_failure:
                await self._rollback_and_wait()

    @work(exclusive=True, group="step")
    async def rollback_unit(self) -> None:
        await self._rollback_and_wait()

    async def _rollback_and_wait(self) -> None:
        try:
            self.post_message(m.RolledBack(await self.runner().rollback(restart=True)))
            self.post_message(m.Healthy((await self.runner().wait_healthy()).facts))
        except Exception as err:  # noqa: BLE001
            self.post_message(m.StepFailed("rollback", in_words(err)))

    @work(exclusive=True, group="bench")
    async def run_bench(self, run: int) -> None:
        levels: list[Any] = []
        cancelled = False
        try:
            async for event in self.runner().bench(self.trial.profile if self.trial else None):
                self.post_message(m.BenchEventMessage(event, run))
                if isinstance(event, RunDone):
                    levels, cancelled = list(event.levels), bool(event.cancelled)
                    if event.error:
                        self.post_message(m.StepFailed("bench", event.error))
        except Exception as err:  # noqa: BLE001
            self.post_message(m.StepFailed("bench", in_words(err)))
            return
        self.post_message(m.BenchFinished(levels, cancelled, run))
