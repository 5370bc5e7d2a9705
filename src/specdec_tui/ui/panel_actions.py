"""The panel's actions (its keys and the palette's commands): intents to the trial loop through `ui.host_actions`,
the session side's screens, help and quit. Textual looks actions up on the app; `SpecdecApp` is built on this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from specdec_tui.loop.states import TASKS, Busy
from specdec_tui.ui.keymap import APP_BINDINGS, bound_actions
from specdec_tui.ui.panel_state import PanelState

if TYPE_CHECKING:
    from specdec_tui.ui.host_actions import HostActions
    from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
    from specdec_tui.ui.session_side import SessionSide

# The keys that act on the host; not offered where there is none (offline) or on the compare screen.
HOST_ACTIONS = frozenset({"push", "restart", "rollback", "bench", "rate_search"})
# What each host key would start: the loop's words when it cannot (`HostActions.refused`).
HOST_ACTION_BUSY = {"push": Busy.PUSH, "restart": Busy.RESTART, "rollback": Busy.ROLLBACK, "bench": Busy.BENCH,
                    "rate_search": Busy.RATE_SEARCH}
# The long tasks that own the loop for minutes: while one runs the footer does not offer the host keys (they would
# all be refused), and a host key pressed anyway still says why (`on_key`).


class PanelActions(PanelState):
    """The `action_*` methods and `check_action`; `SpecdecApp.__init__` sets the parts they call (declared here)."""

    sessions: SessionSide
    host_actions: HostActions
    effective_keymap: dict[str, str]
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
            # During a sweep, tune, replay or rate search every host key is refused: not offered either.
            return self.has_host and bool(getattr(self.screen, "HOST_KEYS", True)) and self.busy not in TASKS
        return True

    def on_key(self, event: events.Key) -> None:
        """A host key the footer does not offer during a task still says why when pressed: Textual skips a hidden
        binding (`check_action` False) without a word, and a dimmed one (None) likewise. Runs before Textual's
        own bindings of the key (the app's `_on_key`); a key another binding answers now is left to it."""
        if self.busy not in TASKS or not self.has_host or event.key in self.screen.active_bindings:
            return
        action = self._host_action_of(event.key)
        if action is not None:
            self.host_actions.refused(HOST_ACTION_BUSY[action])

    def _host_action_of(self, key: str) -> str | None:
        """The host action `key` is bound to after the user's `[ui.keymap]`, if any."""
        for binding in bound_actions(APP_BINDINGS):
            keys = self.effective_keymap.get(binding.id or "", binding.key)
            if binding.action in HOST_ACTIONS and key in (k.strip() for k in keys.split(",")):
                return binding.action
        return None

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
            self._quit_question.action_answer(True)  # quit's key again at its own question: quit (the edit is a draft)
            return
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
