"""The panel's mechanics on the demo host: the demo starts itself, escape/c cancel a benchmark from
anywhere, quit asks when work would be lost, and a wide terminal shows health beside the benchmark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual import events
from textual.widgets import Input

from specdec_tui.core.config import BenchProfile
from specdec_tui.loop.states import Busy
from specdec_tui.ui import messages as m
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import demo_app, record_notifications, started, wait_for

# Long enough that a level is still running when the test cancels it (the test never waits it out).
LONG_PROFILE = BenchProfile(concurrency=(1, 4), requests=5000, warmup=0, max_tokens=256)


def long_bench_app(root: Path, time_scale: float = 200.0):
    app = demo_app(root, time_scale=time_scale)
    app.config = replace(app.config, profiles={"default": LONG_PROFILE})
    return app


def health_state(app) -> str:
    return app.screen.query_one("#health-pane").state


def table(app):
    return app.screen.query_one("#bench-table")


async def keys(pilot, app, *names: str, until, what: str) -> None:
    """Press keys while a benchmark runs, then wait for `until`.

    `pilot.press` waits for the process to go idle after each key (up to 1 s twice), which it never does
    while the benchmark thread measures; so the keys are posted as the terminal driver posts them."""
    for name in names:
        app.post_message(events.Key(name, name if len(name) == 1 else None))
    await wait_for(pilot, until, what)


async def start_bench(pilot, app) -> None:
    await wait_for(pilot, lambda: health_state(app) == "ready" and app.busy is Busy.IDLE, "the demo to be ready", steps=1200)
    await pilot.press("b")
    await wait_for(pilot, lambda: table(app).status.startswith("Level c=1"), "the first level to run")


async def test_demo_host_starts_its_inactive_service_by_itself(tmp_path: Path) -> None:
    app = demo_app(tmp_path, time_scale=20)  # slow enough that the health watcher sees the start
    seen = record_notifications(app)
    states: list[str] = []

    def hook(message) -> None:
        if isinstance(message, m.HealthChanged) and (not states or states[-1] != message.snapshot.state.value):
            states.append(message.snapshot.state.value)

    assert app.host is not None and (await app.host.status()).active_state == "inactive"  # not serving at the open
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: health_state(app) == "ready", "health READY without pressing r", steps=1200)
        assert any("starting it" in n for n in seen)
        # It was not serving when the panel opened and is now, with no key pressed. (Which states the watcher samples
        # on the way depends on the machine's load, so they are not asserted: under two busy loops its first sample
        # came once the server was up, and states[0] was "ready".)
        assert states[-1] == "ready"
        await wait_for(pilot, lambda: app.busy is Busy.IDLE, "the start step to finish")
        assert "26" in app.screen.query_one("#health-pane").section_text("facts")  # steps 1 → 26, as in the seed
        assert any(n.startswith("Server is healthy") for n in seen)


async def test_remote_host_is_never_started_implicitly(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    app.host.info = replace(app.host.info, kind="ssh")  # same machinery, but the app must treat it as production
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.config_pane.running_text != "", "the unit to load")
        # the unit is loaded by the connect worker, which checks the service after; wait for it to end
        await wait_for(pilot, lambda: not any(w.name == "connect_host" for w in app.workers), "the connect step to end")
        await pilot.pause()
        assert app.busy is Busy.IDLE
        assert (await app.host.status()).active_state == "inactive"


async def assert_cancelled(pilot, app, seen: list[str]) -> None:
    assert not app.bench_running
    assert "Benchmark cancelled" in table(app).status
    assert app.session.trials[-1].status == "cancelled"
    assert "Benchmark cancelled." in seen
    shown = [table(app).cell_text(c, "progress") for c in (1, 4)]
    assert shown == ["cancelled", "not run"]  # the level in flight was cut short; the next never ran
    bench_workers = [w for w in app.workers if w.group == "bench"]
    await wait_for(pilot, lambda: all(w.is_finished for w in bench_workers), "the benchmark worker to end")
    await pilot.pause()
    assert [table(app).cell_text(c, "progress") for c in (1, 4)] == shown  # nothing moves after the cancel


async def test_escape_cancels_a_benchmark_from_a_text_field_and_another_tab(tmp_path: Path) -> None:
    app = long_bench_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await start_bench(pilot, app)
        tabs = app.screen.query_one("#tabs")
        # Config tab, typing into a flag field while the benchmark runs
        await keys(pilot, app, "1", until=lambda: tabs.active == "config", what="the Config tab")
        field = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
        field.focus()
        await keys(pilot, app, "end", "c", until=lambda: field.value.endswith("c"), what="c typed into the field")
        assert app.bench_running  # a "c" typed into a field is text, not a cancel
        await keys(pilot, app, "backspace", "escape", until=lambda: not app.bench_running, what="the cancel")
        await assert_cancelled(pilot, app, seen)
        assert app.focused is field  # the cancel took the escape; a second one leaves the field
        await pilot.press("escape")
        assert not isinstance(app.focused, Input)


async def test_escape_closes_the_journal_filter_first_then_cancels(tmp_path: Path) -> None:
    app = long_bench_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await start_bench(pilot, app)
        journal = app.screen.query_one("#journal-pane")
        await keys(pilot, app, "slash", until=lambda: journal.has_class("-filtering"), what="the filter to open")
        await keys(pilot, app, "escape", until=lambda: not journal.has_class("-filtering"), what="the filter to close")
        assert app.bench_running
        await keys(pilot, app, "escape", until=lambda: not app.bench_running, what="the cancel")
        await assert_cancelled(pilot, app, seen)


async def test_c_cancels_a_benchmark_on_the_bench_tab_and_editor_escape_too(tmp_path: Path) -> None:
    app = long_bench_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await start_bench(pilot, app)
        app.screen.query_one("#bench-data").focus()
        await keys(pilot, app, "c", until=lambda: not app.bench_running, what="the cancel")
        await assert_cancelled(pilot, app, seen)
        await pilot.press("b")  # a new run on the same trial's server, cancelled from the unit editor
        await wait_for(pilot, lambda: table(app).status.startswith("Level c=1"), "the second run")
        tabs = app.screen.query_one("#tabs")
        await keys(pilot, app, "1", until=lambda: tabs.active == "config", what="the Config tab")
        editor = app.screen.query_one(UnitEditor)
        editor.focus()
        await keys(pilot, app, "escape", until=lambda: not app.bench_running, what="the cancel")
        await assert_cancelled(pilot, app, seen)
        assert app.focused is editor


async def test_quit_asks_while_a_benchmark_runs(tmp_path: Path) -> None:
    app = long_bench_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await start_bench(pilot, app)
        asking = lambda: isinstance(app.screen, ConfirmScreen)  # noqa: E731
        await keys(pilot, app, "q", until=asking, what="the quit question")
        assert "a running benchmark" in str(app.screen.question)
        await keys(pilot, app, "n", until=lambda: not asking(), what="the answer no")
        assert sum(isinstance(s, ConfirmScreen) for s in app.screen_stack) == 0
        assert app.is_running and app.bench_running  # no: the benchmark goes on
        await keys(pilot, app, "ctrl+q", until=asking, what="the quit question again")
        assert sum(isinstance(s, ConfirmScreen) for s in app.screen_stack) == 1  # asked once
        # quit's key again at its own question answers it (test_ui_quit_twice): ctrl+q, ctrl+q quits
        await keys(pilot, app, "ctrl+q", until=lambda: not app.is_running, what="the app to exit")
    assert app.return_code == 0


async def test_quit_asks_with_an_unpushed_edit_and_keeps_it_as_a_draft(tmp_path: Path) -> None:
    from specdec_tui.core import drafts

    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = f"#{widget_id('field', 'speculative-num-steps')}"
        # the unit is loaded and the form shows it (its rows are rebuilt for the unit's other flags: a field
        # taken before that would be gone)
        await wait_for(pilot, lambda: app.config_pane.running_text != "" and app.screen.query_one(steps, Input).value,
                       "the unit in the form")
        app.screen.query_one(steps, Input).focus()
        await pilot.press("end", "backspace", "3", "escape")
        await wait_for(pilot, lambda: app.config_pane.dirty, "the edit to register")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question")
        assert "unpushed edit" in str(app.screen.question)
        await pilot.press("escape")  # escape answers no
        assert app.is_running and not isinstance(app.screen, ConfirmScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, "the app to exit")
    draft = drafts.load_draft("demo", app.unit_name)
    assert draft is not None and "--speculative-num-steps 3" in draft


async def test_wide_terminal_shows_health_beside_the_bench_table(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: health_state(app) == "ready", "health READY", steps=1200)
        side = app.screen.query_one("#health-side")
        bench = app.screen.query_one("#bench-table")
        assert side.display and side.region.width > 0 and bench.region.width > 0
        assert side.region.x >= bench.region.right  # beside, not below
        assert side.state == "ready"  # fed like the Health tab's pane
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert not app.screen.has_class("-wide") and side.region.width == 0


def chart_rows(app) -> list[str]:
    chart = app.screen.query_one("#tok-chart")
    return [chart.render_line(y).text for y in range(chart.size.height)]


async def test_the_bench_chart_says_the_first_level_is_running_not_that_there_is_no_benchmark(tmp_path: Path) -> None:
    app = long_bench_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: any("no benchmark yet" in row for row in chart_rows(app)), "an empty chart")
        await start_bench(pilot, app)
        trial = app.trial_loop.trial
        await wait_for(pilot, lambda: any(f"#{trial.id} " in row and "the first level is running" in row
                                          for row in chart_rows(app)), "the run named on the chart")
        await keys(pilot, app, "escape", until=lambda: not app.bench_running, what="the cancel")
        await wait_for(pilot, lambda: any("no benchmark yet" in row for row in chart_rows(app)),
                       "no curve after a run cancelled before its first level")
