"""The panel's actions (its keys and the palette's commands): intents to the trial loop through `ui.host_actions`,
the session side's screens, help and quit. Textual looks actions up on the app; `SpecdecApp` is built on this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specdec_tui.ui.panel_state import PanelState

if TYPE_CHECKING:
    from specdec_tui.ui.host_actions import HostActions
    from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
    from specdec_tui.ui.session_side import SessionSide

# The keys that act on the host; not offered where there is none (offline) or on the compare screen.
HOST_ACTIONS = frozenset({"push", "restart", "rollback", "bench", "rate_search"})


class PanelActions(PanelState):
    """The `action_*` methods and `check_action`; `SpecdecApp.__init__` sets the parts they call (declared here)."""

    sessions: SessionSide
    host_actions: HostActions
    _quit_question: ConfirmScreen | None

    # -- actions: intents to the loop (ui.host_actions) ------------------------------------------
    async def action_push(self) -> None:
        await self.host_actions.push()

    def action_restart(self) -> None:
        self.host_actions.restart()

    async def action_rollback(self) -> None:
        await self.host_actions.rollback()

    def action_bench_load(self) -> None:
        """The palette's "Benchmark with a load…": the load form, then a benchmark."""
        self.host_actions.bench_with_load()

    def action_bench(self) -> None:
        self.host_actions.bench()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_bench":
            return self.bench_running and self.screen is self.main_or_none and not self.host_actions.escape_is_local()
        if action in HOST_ACTIONS:
            # offline there is no host to act on, and a screen of saved trials (compare) says HOST_KEYS = False: the
            # footer does not offer what cannot happen there (False hides the key). Asked of the host and the
            # screen, not the loop or the compare screen's class: the first frame's footer is drawn before either
            # is imported.
            return self.has_host and bool(getattr(self.screen, "HOST_KEYS", True))
        return True

    def action_cancel_bench(self) -> None:
        self.host_actions.cancel()

    def action_cancel(self) -> None:
        self.host_actions.cancel()

    def action_help(self) -> None:
        from specdec_tui.ui.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_rows()))

    # the session side's keys (o, v, S, R, T, M): Textual looks actions up on the app
    def action_sessions(self) -> None:
        self.sessions.open_list()

    def action_compare(self) -> None:
        self.sessions.compare()

    def action_sweep(self) -> None:
        self.sessions.sweep()

    def action_replay(self) -> None:
        self.sessions.replay()

    def action_tune(self) -> None:
        self.sessions.tune()

    def action_rate_search(self) -> None:
        self.sessions.rate_search()

    async def action_quit(self) -> None:
        if self._quit_question is not None and self._quit_question in self.screen_stack:
            return  # already asking; answer that question
        if self.sessions.task_blocks_quit():
            return
        pane = await self.edit_pane()  # q right at start: the form (and any draft it holds) first
        if pane is None:
            return
        pane.flush_draft()
        reasons = [r for r, on_ in (("an unpushed edit (kept as a draft)", pane.dirty), ("a running benchmark", self.bench_running)) if on_]
        if not reasons:
            self.exit()
            return

        def go(yes: bool | None) -> None:
            self._quit_question = None
            if yes:
                self.exit()

        from specdec_tui.ui.screens.confirm_screen import ConfirmScreen

        self._quit_question = ConfirmScreen(f"Quit with {' and '.join(reasons)}?", yes="Quit")
        self.push_screen(self._quit_question, go)
