"""Renders the trial loop's events onto the main screen: the Config tab follows the unit, the journal gets a
marker per step, the bench table and trials list fill, failures become a dialog or a notification.

It keeps only what the views need to stay in step with the loop (the busy state as last shown, whether the
draft was offered, an auto-benchmark to start once the push has ended); every trial fact stays in the loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specdec_tui.core import drafts
from specdec_tui.loop.states import Busy, Step
from specdec_tui.loop.step_words import step_failed, step_failed_title

if TYPE_CHECKING:  # the app composes the renderer; a type-only import, no cycle at run time
    from specdec_tui.loop.events import LoopEvent, StepFailed
    from specdec_tui.ui.app import SpecdecApp

DIALOG_STEPS = (Step.PUSH, Step.RESTART, Step.HEALTHY, Step.ROLLBACK, Step.CONNECT)


class LoopRenderer:
    def __init__(self, app: SpecdecApp) -> None:
        self.app = app
        self.busy = Busy.IDLE  # as last shown: events arrive in order, so an ended benchmark is recorded and said
        self._draft_offered = False
        self._bench_when_idle = False  # auto_bench: benchmark once the push that turned healthy has ended

    async def render(self, event: LoopEvent) -> None:
        # the event records come with a trial loop: an offline panel never loads them, a host's after its first frame
        from specdec_tui.loop import events as ev

        app = self.app
        main = app.main
        if isinstance(event, ev.UnitLoaded):
            pane = app.config_pane
            await pane.load_running(event.text, keep_edit=pane.dirty)
            if not self._draft_offered:
                self._draft_offered = True
                self._offer_draft(event.text)
        elif isinstance(event, ev.Pushed):
            pane = app.config_pane
            await pane.load_running(event.text, keep_edit=pane.text != event.text)
            drafts.clear_draft(app.host_name, app.unit_name)
            app.marker(f"pushed trial {event.trial.id} {event.trial.label}".rstrip())
            app.show_trials()
            app.notify(f"Pushed {app.unit_name}; restarting…")
        elif isinstance(event, ev.Restarted):
            app.marker(f"restart: {event.result.job_result}")
            if event.result.ok and app.loop is not None:
                for view in main.health_views:
                    view.start_wait(app.loop.healthy_timeout_s)
        elif isinstance(event, ev.Healthy):
            self._end_wait()
            app.marker("healthy")
            app.notify("Server is healthy." + ("" if app.config.ui.auto_bench else " Press b to benchmark."))
            self._bench_when_idle = app.config.ui.auto_bench and self.busy is Busy.PUSH
        elif isinstance(event, ev.RolledBack):
            await app.config_pane.load_running(event.text)
            app.marker("rolled back")
            app.notify("Rolled back to the previous unit; restarting…")
        elif isinstance(event, ev.StepFailed):
            self._end_wait()
            self._step_failed(event)
        elif isinstance(event, ev.BenchStarted):
            from specdec_tui.core.latency import trial_limit  # with the bench tab, not on the first frame

            trial = app.loop.trial if app.loop is not None else None  # its server's capacity marks queueing levels
            main.bench_table.start_run(list(event.concurrency), event.previous,
                                       limit=trial_limit(trial) if trial is not None else None)
            app.show_bench_chart()  # the chart says the run is on its way, not "no benchmark yet"
            main.action_show_tab("bench")
        elif isinstance(event, ev.BenchUpdate):
            if app.loop is not None and event.run == app.loop.bench_run:
                main.bench_table.apply_event(event.event)
        elif isinstance(event, ev.TrialChanged):
            app.show_trials()
        elif isinstance(event, ev.TrialEnded):
            app.show_trials()
            if event.trial.levels or event.trial.status == "cancelled":
                app.notify({"ok": "Benchmark done; trial recorded.", "cancelled": "Benchmark cancelled."}.get(
                    event.trial.status, f"Trial {event.trial.id} failed: {event.trial.failure}"),
                    severity="error" if event.trial.status == "failed" else "information")
        elif isinstance(event, ev.BusyChanged):
            if event.busy is Busy.IDLE:
                self._end_wait()
            self.busy = event.busy
            app.refresh_bindings()
            if event.busy is Busy.IDLE and self._bench_when_idle:
                self._bench_when_idle = False
                app.action_bench()

    def _end_wait(self) -> None:
        main = self.app.main_or_none
        for view in main.health_views if main is not None else []:
            view.end_wait()

    def _step_failed(self, event: StepFailed) -> None:
        app = self.app
        self._bench_when_idle = False
        app.marker(step_failed(event.step))
        reason = event.reason.rstrip()
        kept = " Your edit is kept; fix it and press p again." if event.step is Step.PUSH else ""
        if kept and not reason.endswith((".", "!", "?")):
            reason += "."
        if event.step in DIALOG_STEPS:
            from specdec_tui.ui.screens.error_screen import ErrorScreen

            app.push_screen(ErrorScreen(step_failed_title(event.step), reason + kept))
        else:
            app.notify(reason, title=step_failed_title(event.step), severity="error")

    def _offer_draft(self, running: str) -> None:
        app = self.app
        draft = drafts.load_draft(app.host_name, app.unit_name)
        if draft is None or draft == running:
            return

        async def answer(restore: bool | None) -> None:
            if restore:
                await app.config_pane.set_text(draft)
                app.notify("Draft restored: the diff shows what a push would change.")
            else:
                drafts.clear_draft(app.host_name, app.unit_name)

        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

        app.push_screen(
            ConfirmScreen(f"An unpushed edit of {app.unit_name} on {app.host_name} was saved earlier.\nRestore it?",
                          yes="Restore", no="Discard"),
            answer,
        )
