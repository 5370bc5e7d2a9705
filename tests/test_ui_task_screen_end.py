"""How a task screen says it stopped (TaskScreen's `@on(TaskFailed)`/`@on(TaskCancelled)`, the words a hook): the
rate search pushes nothing, so its words say so instead of the base's "the unit that ran before was restored",
said once, and the screen is no longer running. Real Textual, the screen fed its own messages (no worker)."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Static

from specdec_tui.core.config import BenchProfile
from specdec_tui.ui.screens.rate_search_screen import RateSearchScreen
from specdec_tui.ui.screens.task_screen import TaskCancelled, TaskFailed

PROFILE = BenchProfile(requests=80, slo=("ttft_p99=2s",))


class Host(App[None]):
    def __init__(self, screen: RateSearchScreen) -> None:
        super().__init__()
        self.task_screen = screen

    def on_mount(self) -> None:
        self.task_screen.running = True
        self.push_screen(self.task_screen)


def _result(screen: RateSearchScreen) -> str:
    return str(screen.query_one("#rate-search-result", Static).content)


async def test_a_failed_rate_search_says_nothing_was_pushed_once() -> None:
    screen = RateSearchScreen(None, PROFILE)
    app = Host(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen.post_message(TaskFailed("cannot reach http://127.0.0.1:1/v1/models"))
        await pilot.pause()
        assert not screen.running
        assert _result(screen) == ("Rate search failed: cannot reach http://127.0.0.1:1/v1/models\n"
                                   "Nothing was pushed: the unit runs as before. Press escape to go back.")
        assert [line for line in screen.log_lines if "stopped" in line] == [
            "The rate search stopped: cannot reach http://127.0.0.1:1/v1/models"]


async def test_a_cancelled_rate_search_keeps_its_probes_and_pushed_nothing() -> None:
    screen = RateSearchScreen(None, PROFILE)
    app = Host(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen.post_message(TaskCancelled())
        await pilot.pause()
        assert not screen.running
        assert _result(screen).startswith("Rate search cancelled; the probes so far are in the session.")
        assert "was put back" not in _result(screen)
