"""80×24 works (issue 17, point 5): the chart's axis labels at narrow widths, notices that leave the Config tab's
diff readable, the sweep form whole on screen, and a snapshot of every screen at 80×24 (and 160×48)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, save_session
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.loop.sweep_form import SweepForm, plan_from_form
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.error_screen import ErrorScreen
from specdec_tui.ui.screens.replay_screen import ReplayScreen
from specdec_tui.ui.screens.sessions_screen import SessionsScreen
from specdec_tui.ui.screens.sweep_form_screen import SweepFormScreen
from specdec_tui.ui.screens.sweep_screen import SweepScreen
from specdec_tui.ui.widgets.tok_chart import TokChart

from .test_ui_states_snapshots import READY_LINES, feed_journal, records, seed_trials, show
from .test_ui_widgets_journal import access
from .ui_helpers import offline_app, started, wait_for


class ChartHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TokChart(id="chart")


def axis_labels(chart: TokChart) -> list[str]:
    lines = chart.render().plain.splitlines()  # type: ignore[union-attr]
    frame = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[frame + 1].split()


def level(c: int, tok_s: float) -> LevelResult:
    return LevelResult(concurrency=c, requests=32, output_tokens=8192, duration_s=20.0, output_tok_s=tok_s,
                       per_request_tok_s=Dist(p50=tok_s / c), ttft_ms=Dist(p50=50.0), tpot_ms=Dist(p50=5.0))


@pytest.mark.parametrize("width", [16, 17, 20, 26, 40, 80])
@pytest.mark.parametrize("levels", [(1, 4, 16, 32, 64), (1, 2, 4, 8, 16, 32, 64)], ids=["5-levels", "7-levels"])
async def test_the_top_level_is_labelled_whole_at_any_width(width: int, levels: tuple[int, ...]) -> None:
    """plotext drops or overprints colliding labels; the chart keeps those that fit, the top level always."""
    app = ChartHost()
    async with app.run_test(size=(width, 16)) as pilot:
        chart = app.query_one(TokChart)
        chart.set_trials([("steps=3", [level(c, 12345.6 * (i + 1) / len(levels)) for i, c in enumerate(levels)])])
        await pilot.pause()
        labels = axis_labels(chart)
        assert labels[-1] == "64", labels
        assert set(labels) <= {str(c) for c in levels}, labels


# -- every screen at 80×24 and 160×48 ------------------------------------------------------------------------

SIZES = [(80, 24), (160, 48)]
SIZE_IDS = ["80x24", "160x48"]


async def settle(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def config_with_a_notice(pilot: Pilot) -> None:
    """A notice while the Config tab shows an edit: its diff pane (5 lines at 80×24) must stay readable."""
    app = pilot.app
    await pilot.pause()
    await app.config_pane.set_flag("speculative-num-steps", "2")
    app.main.action_show_tab("config")
    app.notify("Nothing to push: the edit matches the unit on the host. Press r to restart anyway.", severity="warning")
    await settle(pilot)


async def journal_with_own_checks(pilot: Pilot) -> None:
    app = pilot.app
    lines = [access("/health"), access("/v1/models")] * 30 + list(READY_LINES)
    feed_journal(app, records(tuple(lines)))
    await show(pilot, "journal")


async def trials_tab(pilot: Pilot) -> None:
    await show(pilot, "trials")


async def fleet_tab(pilot: Pilot) -> None:
    await show(pilot, "fleet")


async def help_screen(pilot: Pilot) -> None:
    await pilot.pause()
    pilot.app.action_help()
    await settle(pilot)


async def sweep_form(pilot: Pilot) -> None:
    await pilot.pause()
    pilot.app.push_screen(SweepFormScreen(BenchProfile(concurrency=(1, 4, 16, 32, 64)), values="1..4", repeats=3,
                                          configured=("gpu-a", "gpu-b", "gpu-c"), active="gpu-a"))
    await settle(pilot)


async def error_dialog(pilot: Pilot) -> None:
    await pilot.pause()
    pilot.app.push_screen(ErrorScreen(
        "The restart did not become healthy",
        "the server failed while starting: unit failed (exit-code, exit status 1) — journal: RuntimeError: Not enough "
        "memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.95\n\n"
        "The previous unit was restored and restarted (auto_rollback). The journal tab has the whole start."))
    await settle(pilot)


async def confirm_dialog(pilot: Pilot) -> None:
    await pilot.pause()
    pilot.app.push_screen(ConfirmScreen("Roll back to the previous unit (trial #2 steps=2) and restart? "
                                        "--speculative-num-steps 3 → 2, --speculative-num-draft-tokens 4 → 3.",
                                        yes="Roll back"))
    await settle(pilot)


def failing_runner(app: SpecdecApp) -> TrialLoop:
    """A loop on a workspace with no unit: a sweep or replay stops at its first step, in words."""
    host = LocalHost(Path("no-such-workspace"), "sglang-demo.service", "http://127.0.0.1:9", name="demo")
    return TrialLoop(host=host, session=app.session, profile=BenchProfile(concurrency=(1, 4, 16, 32, 64)),
                     base_url="http://127.0.0.1:9")


def status_of(app: SpecdecApp, selector: str) -> str:
    found = app.screen.query(selector)
    return str(found.first().render()) if found else ""


async def sweep_screen(pilot: Pilot) -> None:
    await pilot.pause()
    app = pilot.app
    plan = plan_from_form(SweepForm("speculative-num-steps", "1..4", "3", "c1"), BenchProfile(concurrency=(1, 4, 16, 32, 64)))
    app.push_screen(SweepScreen(failing_runner(app), plan))
    await wait_for(pilot, lambda: "stopped" in status_of(app, "#sweep-status"), "the sweep to stop")
    await settle(pilot)


async def replay_screen(pilot: Pilot) -> None:
    await pilot.pause()
    app = pilot.app
    app.push_screen(ReplayScreen(failing_runner(app), app.session))
    await wait_for(pilot, lambda: "stopped" in status_of(app, "#replay-status"), "the replay to stop")
    await settle(pilot)


async def sessions_list(pilot: Pilot) -> None:
    await pilot.pause()
    pilot.app.push_screen(SessionsScreen(Path("snap-sessions")))
    await settle(pilot)


SCREENS: dict[str, Callable[[Pilot], Awaitable[None]]] = {
    "config-notice": config_with_a_notice,
    "journal-own-checks": journal_with_own_checks,
    "trials": trials_tab,
    "fleet": fleet_tab,
    "help": help_screen,
    "sessions": sessions_list,
    "sweep-form": sweep_form,
    "sweep": sweep_screen,
    "replay": replay_screen,
    "error": error_dialog,
    "confirm": confirm_dialog,
}


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_snapshot(snap_compare, screen: str, size: tuple[int, int], private_dirs: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(private_dirs)  # relative folders: the pictures hold no temp path
    directory = Path("snap-sessions")
    directory.mkdir(exist_ok=True)
    save_session(Session(host="gpu-box", unit="sglang.service", created=datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
                         trials=seed_trials()), directory / "20260301-093000-gpu-box.toml")
    app = offline_app(trials=seed_trials())

    async def run_before(pilot: Pilot) -> None:
        await started(pilot)  # the form and every tab, not the first frame's unit preview
        await SCREENS[screen](pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_the_sweep_form_shows_its_choices_and_start_at_80x24() -> None:
    """The compact selects showed an empty row (a rule meant for the button row pushed their value below it)."""
    from textual.widgets import Button, Select
    from textual.widgets._select import SelectCurrent

    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await sweep_form(pilot)
        form = app.screen
        for selector in ("#sweep-flag", "#sweep-objective"):
            select = form.query_one(selector, Select)
            shown = select.query_one(SelectCurrent).region
            assert select.region.contains_region(shown) and shown.height == 1, (selector, select.region, shown)
        start = form.query_one("#start", Button).region
        assert start.height >= 1 and start.bottom <= 24


async def test_a_notice_leaves_the_config_diff_readable_at_80x24() -> None:
    app = offline_app(trials=seed_trials())
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await started(pilot)  # the form and every tab: one pause did not always see the form mounted
        await config_with_a_notice(pilot)
        diff = app.main.query_one("#diff-view").region
        toasts = [toast.region for toast in app.screen.query("Toast")]
        assert toasts, "the notice is shown"
        assert not any(toast.overlaps(diff) for toast in toasts), (toasts, diff)


async def test_at_80x24_the_journal_status_and_the_help_table_are_not_cut() -> None:
    """A new user at 80×24 read "56 panel health checks hidden (h" on a paused journal, and the help table's
    "Where" column was off the dialog (one long action name widened its column)."""
    from rich.cells import cell_len
    from textual.widgets import DataTable

    app = offline_app(trials=seed_trials())
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        lines = [access("/health"), access("/v1/models")] * 30 + [f"[2026-03-01 09:00:{i:02d}] INFO: line {i}" for i in range(40)]
        feed_journal(app, records(tuple(lines)))
        await show(pilot, "journal")
        pane = app.main.journal_pane
        pane.log_view.focus()
        await pilot.press("pageup")  # paused: the longer of the two status lines
        await wait_for(pilot, lambda: not pane.following, "the journal paused")
        status = pane.query_one("#journal-status")
        text = pane.status_text()
        assert text.startswith("⏸ paused") and text.endswith("hidden (h shows)")
        assert cell_len(text) <= status.content_region.width, (text, status.content_region.width)

        await help_screen(pilot)
        table = app.screen.query_one(DataTable)
        widths = [column.get_render_width(table) for column in table.columns.values()]
        assert sum(widths) <= table.scrollable_content_region.width, (widths, table.scrollable_content_region)


async def test_at_80x24_the_config_diffs_no_changes_message_wraps_instead_of_being_cut() -> None:
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        diff = app.main.query_one("#diff-view")
        body = diff.query_one("#diff-body")
        assert "matches the unit on the host" in str(body.render())
        assert body.size.width <= diff.scrollable_content_region.width, (body.size, diff.scrollable_content_region)
        await app.config_pane.set_flag("speculative-num-steps", "2")
        await pilot.pause()
        assert "--speculative-num-steps 2" in str(body.render())  # a diff's lines keep their width (they scroll)
