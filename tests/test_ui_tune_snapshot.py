"""The Tune screen at 80×24 (issue 31, point 5): a finished search on the deterministic surface
(`tests/tune_surface.py`, steps × topk × draft tokens with memory and capture failures) fed to the screen as the
engine's own events — the chart by steps/topk/draft per level with failures marked, the footer with every key,
and a snapshot of it all."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer, Input

from specdec_tui.core.config import BenchProfile, Config, HostConfig
from specdec_tui.core.tune_objective import parse_slo
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import demo_unit_text
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.tune import TunePlan, run_tune
from specdec_tui.loop.tune_space import candidates
from specdec_tui.ui.screens.tune_screen import TuneScreen
from specdec_tui.ui.tune_messages import TuneFinished

from .tune_surface import LEVELS, FakeLauncher
from .ui_helpers import offline_app, started, wait_for

SPACE = {"speculative-num-steps": ("0", "1", "3", "5", "7"), "speculative-eagle-topk": ("1", "2", "4", "8"),
         "speculative-num-draft-tokens": ("2", "4", "8", "32")}
FORM = ("speculative-num-steps=0,1,3,5,7; speculative-eagle-topk=1,2,4,8; speculative-num-draft-tokens=2,4,8,32",
        "ttft_p99=400ms", "12")


def tune_screen(app: object, config: Config | None = None) -> TuneScreen:
    host = LocalHost(Path("no-such-workspace"), "sglang-demo.service", "http://127.0.0.1:9", name="demo")
    loop = TrialLoop(host=host, session=app.session, profile=BenchProfile(concurrency=LEVELS),  # type: ignore[attr-defined]
                     base_url="http://127.0.0.1:9")
    return TuneScreen(loop, space=FORM[0], slo=FORM[1], budget=int(FORM[2]), config=config)


async def searched(pilot: Pilot) -> TuneScreen:
    """The screen after a whole search on the surface, every event as the engine emits it."""
    screen = tune_screen(pilot.app)
    pilot.app.push_screen(screen)
    await pilot.pause()
    plan = TunePlan(SPACE, LEVELS, parse_slo([FORM[1]]), budget=int(FORM[2]))
    screen.plan = plan
    for field in screen.query("#tune-form Input").results(Input):
        field.disabled = True
    found, refused = candidates(demo_unit_text(30000), SPACE)
    outcome = await run_tune([FakeLauncher()], found, plan, refused=refused, on_event=screen._post)
    screen.post_message(TuneFinished(outcome))
    await wait_for(pilot, lambda: screen.outcome is not None, "the outcome on screen")
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    return screen


async def test_the_chart_plots_steps_topk_draft_per_level_with_failures_marked() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        screen = await searched(pilot)
        assert screen.outcome is not None and screen.outcome.failed  # the surface's memory/capture failures
        chart = str(screen.query_one("#tune-chart").render())
        assert "tok/s per level (× failed)" in chart and "steps/topk/draft" in chart, chart
        assert "×" in chart and "c=1" in chart and "c=32" in chart
        launched = {"/".join(dict(r.point)[f] for f in SPACE) for r in screen.outcome.results}
        assert any(label in chart for label in launched), chart  # configurations named on the axis


async def test_the_tune_screen_shows_every_key_in_its_footer_at_80x24() -> None:
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        screen = await searched(pilot)
        footer = screen.query_one(Footer)
        assert footer.region.bottom == 24 and footer.region.height == 1
        keys = {k.key_display: k.description for k in footer.query("FooterKey") if not k.has_class("-command-palette")}
        for binding in TuneScreen.BINDINGS:
            assert binding.id  # type: ignore[union-attr]
            assert binding.description in keys.values(), keys  # type: ignore[union-attr]
        assert max(k.region.right for k in footer.query("FooterKey")) <= 80
        for widget in ("#tune-form", "#tune-status", "#tune-best", "#tune-chart", "#tune-result"):
            region = screen.query_one(widget).region
            assert region.height > 0 and region.bottom <= footer.region.y, (widget, region)


async def test_at_80x24_the_table_shows_every_level_whole_beside_the_chart() -> None:
    """A new user at 80×24 saw the table cut at "c=16 to": four "c=N tok/s" columns and the full configuration did
    not fit the table's 3/5 of the width. Now every column is inside the table, the chart beside it."""
    from textual.widgets import DataTable

    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        screen = await searched(pilot)
        table = screen.query_one("#tune-surface", DataTable)
        widths = [column.get_render_width(table) for column in table.columns.values()]
        assert sum(widths) <= table.scrollable_content_region.width, (widths, table.scrollable_content_region)
        assert [str(c.label) for c in table.columns.values()] == ["#", "steps/topk/draft", *(f"c={c}" for c in LEVELS)]
        assert table.get_row_at(0)[1].count("/") == 2  # a configuration as the chart's axis writes it
        chart = screen.query_one("#tune-chart").region
        assert chart.x >= table.region.right and chart.width >= 20 and chart.right <= 80


def test_tune_screen_snapshot(snap_compare, private_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(private_dirs)
    app = offline_app()

    async def run_before(pilot: Pilot) -> None:
        await started(pilot)
        await searched(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_the_hosts_field_names_hosts_of_the_config_and_refuses_others_in_words() -> None:
    config = Config(hosts={n: HostConfig(name=n, address="local", workspace=f"ws-{n}") for n in ("demo", "b")})
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        screen = tune_screen(app, config)
        app.push_screen(screen)
        await pilot.pause()
        hosts = screen.query_one("#tune-hosts", Input)
        assert hosts.border_title == "hosts"
        hosts.value = "demo, gpu-z"
        hosts.focus()
        await pilot.press("enter")
        await pilot.pause()
        status = str(screen.query_one("#tune-status").render())
        assert "Cannot start: hosts: no host named gpu-z in the config (configured: b, demo)" in status, status
        hosts.value = "b"
        await pilot.press("enter")
        await pilot.pause()
        status = str(screen.query_one("#tune-status").render())
        assert "Cannot start: hosts: include demo" in status, status
        assert not screen.running


async def test_the_form_refuses_a_budget_or_levels_too_large_to_run_in_words() -> None:
    """The form took a budget of 100,000,000 launches (and `tune` took 4,000 levels): the plan refuses both, in
    words, before anything launches — the same words as `tune --budget` (loop.tune.TunePlan is their one owner)."""
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        screen = tune_screen(app)
        app.push_screen(screen)
        await pilot.pause()
        budget = screen.query_one("#tune-budget", Input)
        budget.value = "100000000"
        budget.focus()
        await pilot.press("enter")
        await pilot.pause()
        status = str(screen.query_one("#tune-status").render())
        assert "Cannot start: budget: between 1 and 1,000 launches (not 100,000,000)" in status, status
        assert not screen.running and screen.plan is None and screen.rows == 0
        app.pop_screen()
        host = LocalHost(Path("no-such-workspace"), "sglang-demo.service", "http://127.0.0.1:9", name="demo")
        many = TrialLoop(host=host, session=app.session, profile=BenchProfile(concurrency=tuple(range(1, 41))),
                         base_url="http://127.0.0.1:9")
        screen = TuneScreen(many, space=FORM[0], slo=FORM[1], budget=12)
        app.push_screen(screen)
        await pilot.pause()
        screen.query_one("#tune-budget", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        status = str(screen.query_one("#tune-status").render())
        assert "Cannot start: concurrency: at most 16 levels (not 40)" in status, status
        assert not screen.running and screen.plan is None
