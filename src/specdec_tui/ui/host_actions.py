"""The host's keys, a collaborator of `SpecdecApp`: `p` push, `r` restart, `u` rollback, `b` bench, `escape`
cancel — each checks what the user sees (an offline session, a busy loop, a form with errors, nothing to push)
and says in words why it does nothing, else hands the intent to the host link (`ui.host_link`), which runs it
in the trial loop. Textual looks actions up on the app, whose `action_*` methods call these.

It is handed the panel as `ActionsPanel`, the members it uses and nothing else (the app is one; this module
never imports ui/app.py: tests/test_ui_helpers_no_app.py).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from textual.widgets import Input, Select, Tabs

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.states import TASKS, Busy
from specdec_tui.ui.panel_port import PanelPort

if TYPE_CHECKING:
    from textual.widget import Widget
    from textual.worker import Worker

    from specdec_tui.hosts.base import Host


class ActionsPanel(PanelPort, Protocol):
    """What the host's keys read and call of the panel (`SpecdecApp` is one): `PanelPort`'s members and these."""

    unit_name: str

    @property
    def host(self) -> Host | None: ...
    @property
    def focused(self) -> Widget | None: ...
    def marker(self, text: str) -> None: ...
    def run_worker(self, work: Coroutine[Any, Any, None], *, group: str, exclusive: bool) -> Worker[None]: ...


class HostActions:
    def __init__(self, app: ActionsPanel) -> None:
        self.app = app

    def refused(self, what: Busy) -> bool:
        """Offline, or the loop is busy: say so and return True."""
        if self.app.trial_loop is None:
            self.app.notify("This is an offline session: there is no host to act on. Start with --host NAME.", severity="warning")
            return True
        why = self.app.trial_loop.refusal(what)
        if why is not None:
            self.app.notify(why, severity="warning")
            return True
        return False

    async def push(self, *, bench_stopped: bool = False) -> None:
        """Push the form's edit; with a benchmark running, ask first (`bench_stopped`: asked, and it has ended)."""
        if self.app.trial_loop is None:
            self.refused(Busy.PUSH)
            return
        pane = await self.app.edit_pane()  # p right at start: pushes the form's edit once it is there
        if pane is None:
            return
        if not pane.running_text:  # p before the host's unit was read: not "the unit does not parse"
            self.app.notify(f"Not pushed: the unit is still being read from {self.app.host_name}.", severity="warning")
            return
        if pane.errors:
            from specdec_tui.core.flags import listed

            self.app.notify(f"Push refused: {len(pane.errors)} error(s) in the flags: {listed(pane.errors)}. "
                            "Fix them first (f applies a suggested fix).", severity="error", title="Push refused")
            return
        if not pane.dirty:  # while a push restarts (its edit landed) r waits too: then say why, not "press r"
            busy = self.app.trial_loop.refusal(Busy.RESTART)
            self.app.notify(f"Nothing to push: the edit matches the unit on the host. {busy or 'Press r to restart anyway.'}",
                            severity="warning")
            return
        if self.app.bench_running and not bench_stopped:
            def go(yes: bool | None) -> None:
                if yes and self.app.link is not None:
                    self.app.run_worker(self._push_after_bench(), group="push-after-bench", exclusive=True)

            from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

            self.app.push_screen(ConfirmScreen("A benchmark is running. Push (and restart, which stops the benchmark)?", yes="Push"), go)
            return
        if self.refused(Busy.PUSH) or self.app.link is None:
            return
        self.app.link.push(pane.text, expected=pane.running_text)  # read again first: changed elsewhere, it asks

    async def _push_after_bench(self) -> None:
        """Yes to "a benchmark is running, push?": the push waits until the cancelled trial is recorded (not one
        frame: a loaded machine takes longer to close the requests, and the push would ask again)."""
        if self.app.link is not None:
            await self.app.link.bench_cancelled()
        await self.push(bench_stopped=True)

    def restart(self) -> None:
        if self.refused(Busy.RESTART) or self.app.link is None:
            return
        self.app.marker("restart requested")
        self.app.link.restart()

    async def rollback(self) -> None:
        if self.refused(Busy.ROLLBACK) or self.app.host is None or self.app.trial_loop is None:
            return

        def go(yes: bool | None) -> None:
            if yes and self.app.link is not None and not self.refused(Busy.ROLLBACK):
                self.app.link.rollback()

        from specdec_tui.loop.rollback_preview import rollback_preview

        pane = await self.app.edit_pane()
        if pane is None:
            return
        running = self.app.trial_loop.running_text or pane.running_text
        preview = await rollback_preview(self.app.host, running, self.app.session)
        question = (preview.describe(self.app.unit_name, self.app.host_name) if preview is not None else
                    f"Roll {self.app.unit_name} back to the previous version on {self.app.host_name} and restart it?")
        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

        self.app.push_screen(ConfirmScreen(question, yes="Roll back"), go)

    def bench(self) -> None:
        if self.app.trial_loop is None:
            self.app.notify("This is an offline session: there is nothing to benchmark.", severity="warning")
            return
        if self.refused(Busy.BENCH) or self.app.link is None:
            return
        self.app.link.bench()
        if self.app.has_unpushed_edit:  # the figures are the running unit's; the chart's title says so, later
            self.app.notify("Benchmarking the unit that runs now: your edit is not pushed (p pushes it, r restarts "
                            "with it).", severity="warning")

    def bench_with_load(self) -> None:
        """The load form (workload, arrivals, rate, SLO), then a benchmark with it; the loop keeps it for later runs."""
        loop = self.app.trial_loop
        if loop is None or self.refused(Busy.BENCH):
            self.bench()  # says why not
            return
        from specdec_tui.ui.screens.bench_form_screen import BenchFormScreen

        def go(profile: BenchProfile | None) -> None:
            if profile is None or self.app.trial_loop is None:
                return
            self.app.trial_loop.use_profile(profile)
            self.bench()

        self.app.push_screen(BenchFormScreen(loop.profile), go)

    def escape_is_local(self) -> bool:
        """True when escape closes something under the cursor first: the journal filter or an open dropdown."""
        focused = self.app.focused
        if focused is None:
            return False
        for node in focused.ancestors_with_self:
            if isinstance(node, Select) and node.expanded:
                return True
            if node.id == "journal-pane" and node.has_class("-filtering"):
                return True
        return False

    def _nothing_to_cancel(self) -> str:
        busy = self.app.busy
        if busy in TASKS:
            return f"Nothing to cancel here: the {busy} is cancelled on its own screen."
        if busy is not Busy.IDLE and busy is not Busy.BENCH:
            return f"The {busy} goes on to its end: it is not stopped midway (esc and c stop a benchmark)."
        return "Nothing to cancel: esc (or c) stops a running benchmark, and leaves a text field."

    def cancel(self) -> None:
        """Cancel the running benchmark; with none, leave the text field so single keys work again: the focus goes
        to the tab bar. Also when no widget has it (the flag form rebuilding its rows under the cursor): the
        field it would give the focus back to is where the user just asked to leave (FlagForm.show_values)."""
        if not self.app.bench_running or self.app.link is None:
            from textual.widgets import TextArea  # the editor's module: not imported before the form is there

            focused, main = self.app.focused, self.app.main_or_none
            if main is not None and (isinstance(focused, (Input, TextArea, Select)) or (focused is None and self.app.screen is main)):
                main.query_one(Tabs).focus()
            else:  # the footer offers the key at all times: pressed with nothing to stop, it says so
                self.app.notify(self._nothing_to_cancel())
            return
        self.app.link.cancel_bench()
