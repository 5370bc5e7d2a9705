"""The main screen's side that shows the trial loop: one `@on` handler per loop message (`ui.loop_messages`).

The Config tab follows the unit, the journal gets a marker per step, the bench table and the health views fill,
failures become a dialog or a notification. What is the app's (the session's trials and charts, starting a
benchmark) is asked for with a message up (`TrialsStale`, `ChartStale`, `BenchWanted`). The screen keeps only what its views need
to stay in step with the loop: the busy state as last shown, whether the draft was offered, the benchmark run on
show, and an auto-benchmark to start once the push has ended; every trial fact stays in the loop.

A base class of `MainScreen` (Textual finds `@on` handlers on message-pump classes only, not on mixins); the widgets
it reads are `MainScreen`'s, named here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.message import Message
from textual.screen import Screen

from specdec_tui.loop.states import Busy, Step, UnitChange
from specdec_tui.loop.step_words import step_failed, step_failed_title
from specdec_tui.ui import loop_messages as lm

if TYPE_CHECKING:
    from specdec_tui.loop.edit_draft import EditDraft
    from specdec_tui.ui.widgets.bench_table import BenchTable
    from specdec_tui.ui.widgets.config_pane import ConfigPane
    from specdec_tui.ui.widgets.health_pane import HealthPane
    from specdec_tui.ui.widgets.journal_pane import JournalPane

DIALOG_STEPS = (Step.PUSH, Step.RESTART, Step.HEALTHY, Step.ROLLBACK, Step.CONNECT)


class LoopScreen(Screen[None]):
    class TrialsStale(Message):
        """The session's trials changed (a push started one, a level or an end changed it): the app redraws them."""

    class ChartStale(Message):
        """A benchmark started: the app redraws the Bench tab's chart (the run on its way, not "no benchmark yet")."""

    class BenchWanted(Message):
        """auto_bench: the push that turned healthy has ended; the app starts the benchmark (as the b key)."""

    def __init__(self, *, draft: EditDraft | None, auto_bench: bool) -> None:
        super().__init__()
        self.draft = draft  # the unit on the host whose unpushed edit this screen's form keeps; None offline
        self.auto_bench = auto_bench
        self.busy = Busy.IDLE  # as last shown: events arrive in order, so an ended benchmark is recorded and said
        self._draft_offered = False
        self._bench_run = 0  # the benchmark run the table shows (a late update of an older run is not applied)
        self._bench_when_idle = False

    # -- what MainScreen provides --------------------------------------------------------------
    @property
    def config_pane(self) -> ConfigPane:
        raise NotImplementedError

    @property
    def journal_pane(self) -> JournalPane:
        raise NotImplementedError

    @property
    def bench_table(self) -> BenchTable:
        raise NotImplementedError

    @property
    def health_views(self) -> list[HealthPane]:
        raise NotImplementedError

    async def mount_tabs(self) -> None:
        raise NotImplementedError

    def action_show_tab(self, tab: str) -> None:
        raise NotImplementedError

    # -- the loop's messages -------------------------------------------------------------------
    async def _shown(self) -> bool:
        """Every tab mounted (waiting for them when a message comes right at start: nothing is dropped); False
        while the app shuts down (a late worker message then finds no widget and is dropped)."""
        if not self.app.is_running or not self.is_attached:
            return False
        await self.mount_tabs()
        return self.app.is_running and self.is_attached

    def marker(self, text: str, *, after: str | None = None) -> None:
        self.journal_pane.add_marker(text, after=after)

    @on(lm.UnitLoadedMessage)
    async def _unit_loaded(self, message: lm.UnitLoadedMessage) -> None:
        if not await self._shown():
            return
        event = message.event
        if event.change is UnitChange.PORT:
            await self.config_pane.follow_port(event.text)  # the demo's own port rewrite: no one's change
            return
        if event.change is UnitChange.ELSEWHERE:
            await self._changed_elsewhere(event.text, refused_push=event.refused_push)
            return
        await self._follow_host(event.text, "read again")
        if not self._draft_offered:
            self._draft_offered = True
            self._offer_draft(message.event.text)

    @on(lm.ReleaseLearnedMessage)
    async def _release_learned(self, message: lm.ReleaseLearnedMessage) -> None:
        if not await self._shown():
            return
        await self.config_pane.use_release(message.event.schema)
        if message.event.note:
            self.app.notify(message.event.note, title=f"SGLang {message.event.version}", severity="warning")

    @on(lm.PushedMessage)
    async def _pushed(self, message: lm.PushedMessage) -> None:
        if not await self._shown():
            return
        event = message.event
        await self._follow_host(event.text, "pushed")
        self.marker(f"pushed trial {event.trial.id} {event.trial.label}".rstrip())
        self.post_message(self.TrialsStale())
        self.notify(f"Pushed {self.draft.unit if self.draft else 'the unit'}; restarting…")

    @on(lm.RestartedMessage)
    async def _restarted(self, message: lm.RestartedMessage) -> None:
        if not await self._shown():
            return
        self.marker(f"restart: {message.event.result.job_result}")
        if message.event.result.ok:
            for view in self.health_views:
                view.start_wait(message.event.healthy_within_s)

    @on(lm.HealthyMessage)
    async def _healthy(self, _: lm.HealthyMessage) -> None:
        if not await self._shown():
            return
        self._end_wait()
        self.marker("healthy", after="ready")  # below the server's "fired up" line, which the journal may bring later
        offer = not self.auto_bench and self.busy in (Busy.IDLE, Busy.START, Busy.PUSH, Busy.RESTART, Busy.ROLLBACK)
        self.notify("Server is healthy." + (" Press b to benchmark." if offer else ""))  # not in a sweep: b is refused
        self._bench_when_idle = self.auto_bench and self.busy is Busy.PUSH

    @on(lm.RolledBackMessage)
    async def _rolled_back(self, message: lm.RolledBackMessage) -> None:
        if not await self._shown():
            return
        await self._follow_host(message.event.text, "rolled back")
        self.marker("rolled back")
        self.notify("Rolled back to the previous unit; restarting…")

    @on(lm.StepFailedMessage)
    async def _step_failed(self, message: lm.StepFailedMessage) -> None:
        if not await self._shown():
            return
        event = message.event
        self._end_wait()
        self._bench_when_idle = False
        self.marker(step_failed(event.step))
        reason = event.reason.rstrip()
        kept = " Your edit is kept; fix it and press p again." if event.step is Step.PUSH else ""
        if kept and not reason.endswith((".", "!", "?")):
            reason += "."
        if event.step in DIALOG_STEPS:
            from specdec_tui.ui.screens.error_screen import ErrorScreen

            self.app.push_screen(ErrorScreen(step_failed_title(event.step), reason + kept))
        else:
            self.notify(reason, title=step_failed_title(event.step), severity="error")

    @on(lm.SessionSaveChangedMessage)
    def _session_save_changed(self, message: lm.SessionSaveChangedMessage) -> None:
        """A failed save is said (what failed, what to do; the trial goes on), and so is the file written again."""
        event = message.event
        if event.failure:
            self.notify(f"{event.failure}. The trial goes on.",
                        title="Session not saved", severity="error", timeout=30)
        else:
            self.notify(f"The session is saved again to {event.path}.", title="Session saved")

    @on(lm.BenchStartedMessage)
    async def _bench_started(self, message: lm.BenchStartedMessage) -> None:
        if not await self._shown():
            return
        from specdec_tui.core.latency import trial_limit  # with the bench tab, not on the first frame

        event = message.event
        self._bench_run = event.run
        self.bench_table.start_run(list(event.concurrency), event.previous,
                                   limit=trial_limit(event.trial) if event.trial is not None else None,
                                   slo=event.trial.profile.slo if event.trial is not None else ())
        self.post_message(self.ChartStale())
        self.action_show_tab("bench")

    @on(lm.BenchUpdateMessage)
    async def _bench_update(self, message: lm.BenchUpdateMessage) -> None:
        if await self._shown() and message.event.run == self._bench_run:
            self.bench_table.apply_event(message.event.event)

    @on(lm.TrialChangedMessage)
    async def _trial_changed(self, _: lm.TrialChangedMessage) -> None:
        if await self._shown():
            self.post_message(self.TrialsStale())

    @on(lm.TrialEndedMessage)
    async def _trial_ended(self, message: lm.TrialEndedMessage) -> None:
        if not await self._shown():
            return
        trial = message.event.trial
        self.post_message(self.TrialsStale())
        if trial.levels or trial.status == "cancelled":
            self.notify({"ok": "Benchmark done; trial recorded.", "cancelled": "Benchmark cancelled."}.get(
                trial.status, f"Trial {trial.id} failed: {trial.failure}"),
                severity="error" if trial.status == "failed" else "information")

    @on(lm.BusyChangedMessage)
    async def _busy_changed(self, message: lm.BusyChangedMessage) -> None:
        if not await self._shown():
            return
        busy = message.event.busy
        if busy is Busy.IDLE:
            self._end_wait()
        self.busy = busy
        self.app.refresh_bindings()
        if busy is Busy.IDLE and self._bench_when_idle:
            self._bench_when_idle = False
            self.post_message(self.BenchWanted())

    async def _follow_host(self, text: str, what: str) -> None:
        """The Config tab follows the host's unit; an edit in progress kept over a change says so (issue 35)."""
        from specdec_tui.loop.edit_draft import EditFate

        pane = self.config_pane
        changed = pane.running_text != text
        if await pane.follow_host(text) is EditFate.KEPT and changed:
            self.notify(f"The unit on the host changed ({what}); your edit is kept and the diff shows it against "
                        "the new unit. d discards it.", title="Edit kept")

    async def _changed_elsewhere(self, text: str, *, refused_push: bool) -> None:
        """Someone else changed the host's unit (another terminal, a hand edit): the form follows it when there is
        no edit; an edit in progress is kept for now and the operator asked (keep mine / take the host's / diff)."""
        from specdec_tui.loop.edit_draft import EditFate

        pane = self.config_pane
        before = pane.running_text
        where = f"on {self.draft.host}" if self.draft else "on the host"
        fate = await pane.follow_host(text)
        if fate is EditFate.FOLLOW:
            self.notify(f"The unit {where} was changed outside this panel (another terminal?); the form shows it now.",
                        title="Unit changed on the host")
            return
        if fate is EditFate.LANDED:
            self.notify(f"The unit {where} was changed outside this panel to exactly your edit: nothing left to push.",
                        title="Unit changed on the host")
            return
        self._ask_changed(before, text, refused_push=refused_push)

    def _ask_changed(self, before: str, now: str, *, refused_push: bool) -> None:
        from specdec_tui.core.terminal_codes import terminal_safe
        from specdec_tui.loop.edit_draft import draft_changes
        from specdec_tui.ui.screens.unit_changed_screen import Answer, UnitChangedScreen

        pane = self.config_pane
        where = f"{self.draft.unit} on {self.draft.host}" if self.draft else "the unit on the host"
        pushed = " Nothing was pushed." if refused_push else ""
        question = (f"{where} was changed outside this panel (another terminal, or a hand edit and daemon-reload) "
                    f"since your edit began.{pushed}\nKeep mine: your edit stays (its diff is now against the "
                    f"host's new unit){'; the push goes on' if refused_push else ''}. Take the host's: your edit "
                    "is dropped and the form shows the host's unit.")
        diff = "\n".join(["What changed on the host:", *(f"  {terminal_safe(x)}" for x in draft_changes(now, before)),
                          "Your edit against the host's unit now:",
                          *(f"  {terminal_safe(x)}" for x in draft_changes(pane.text, now))])

        async def answer(choice: Answer | None) -> None:
            if choice == "take":
                await pane.revert()
                self.notify("Your edit is dropped: the form shows the host's unit.")
            elif choice == "keep" and refused_push:
                await self.app.run_action("push")
            else:
                self.notify("Your edit is kept; its diff is against the host's new unit. d discards it.",
                            title="Edit kept")

        self.app.push_screen(UnitChangedScreen(question, diff), answer)

    def _end_wait(self) -> None:
        for view in self.health_views:
            view.end_wait()

    def _offer_draft(self, running: str) -> None:
        keeper = self.draft
        draft = keeper.offer(running) if keeper is not None else None
        if keeper is None or draft is None:
            return

        async def answer(restore: bool | None) -> None:
            if restore:
                await self.config_pane.set_text(draft)
                self.notify("Draft restored: the diff shows what a push would change.")
            else:
                keeper.discard()

        from rich.markup import escape

        from specdec_tui.core.terminal_codes import terminal_safe
        from specdec_tui.loop.edit_draft import draft_changes
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

        changes = "\n".join(f"  {escape(terminal_safe(line))}" for line in draft_changes(draft, running))
        self.app.push_screen(
            ConfirmScreen(f"An unpushed edit of {keeper.unit} on {keeper.host} was saved earlier. Against the unit "
                          f"on the host it changes:\n{changes}\nRestore it?", yes="Restore", no="Discard"),
            answer,
        )
