"""Issue 16: under a journal flood the health pane's live numbers change ~5 times a second. A section whose text
is unchanged is not redrawn, and one whose new text takes the same rows does not lay the screen out again (each
layout re-rendered every widget on screen; that, with the collector, was the tail of key latency)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.screen import Screen

from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.ui.widgets.health_pane import HealthPane, same_rows

DECODE = ("[2026-12-03 08:44:50 TP0] Decode batch, #running-req: {run}, #token: 900, token usage: 0.12, "
          "accept len: 2.75, accept rate: 0.69, cuda graph: True, gen throughput (token/s): {gen:.2f}, #queue-req: 2, ")


class PaneHost(App[None]):
    def compose(self) -> ComposeResult:
        yield HealthPane(id="pane")


class LayoutCounter:
    def __init__(self, monkeypatch) -> None:
        self.count = 0
        original = Screen._refresh_layout

        def counted(screen: Screen, *args, **kwargs) -> None:
            self.count += 1
            original(screen, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)


async def test_new_live_numbers_are_shown_without_laying_the_screen_out_again(monkeypatch) -> None:
    app = PaneHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed([DECODE.format(run=7, gen=812.4)]))
        await pilot.pause(0.4)
        assert "812" in pane.section_text("live")
        layouts = LayoutCounter(monkeypatch)
        for run, gen in ((9, 901.5), (11, 955.25), (12, 990.0)):
            pane.update_log_stats(LogStats().feed([DECODE.format(run=run, gen=gen)]))
            await pilot.pause(0.3)
        live = pane.section_text("live")
        assert "990" in live and "12" in live  # the user sees the newest numbers
        assert layouts.count == 0


async def test_a_section_that_grows_is_laid_out() -> None:
    app = PaneHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed(["[2026-12-03 08:44:50 TP0] Scheduler hit an exception: RuntimeError: "
                                               "CUDA error: out of memory " + "x" * 300]))
        await pilot.pause(0.4)
        error = pane.query_one("#health-error")
        assert error.display and error.size.height > 1  # the long error wraps onto rows of its own


def test_same_rows_is_false_when_a_line_would_wrap_or_the_count_differs() -> None:
    assert same_rows("a\nb", "c\nd", 10)
    assert not same_rows("a\nb", "c", 10)
    assert not same_rows("a", "x" * 11, 10)
    assert not same_rows("a", "b", 0)  # not laid out yet: no width to judge by


async def test_a_pane_off_screen_shows_the_new_text_when_it_comes_back() -> None:
    """Updated while off screen (no layout then), the section is measured again when the pane is shown."""
    app = PaneHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed(["[2026-12-03 08:44:49 TP0] Scheduler hit an exception: boom"]))
        await pilot.pause(0.4)
        pane.display = False
        await pilot.pause(0.2)
        pane.update_log_stats(LogStats().feed(["[2026-12-03 08:44:50 TP0] Scheduler hit an exception: RuntimeError: "
                                               "CUDA error: out of memory " + "x" * 300]))
        await pilot.pause(0.4)
        pane.display = True
        await pilot.pause()
        error = pane.query_one("#health-error")
        assert error.display and error.size.height > 1 and "out of memory" in pane.section_text("error")


async def test_a_pane_shown_again_with_new_numbers_of_the_same_rows_is_laid_out_once(monkeypatch) -> None:
    """Showing the pane lays the screen out; the numbers that changed meanwhile, taking the rows they took, are
    painted into that layout without a second one (after every switch to a tab with health numbers, under a
    flood: ~25 ms more per tab key on a 2-core machine)."""
    app = PaneHost()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(HealthPane)
        pane.update_log_stats(LogStats().feed([DECODE.format(run=7, gen=812.4)]))
        await pilot.pause(0.4)
        pane.display = False
        await pilot.pause(0.2)
        pane.update_log_stats(LogStats().feed([DECODE.format(run=9, gen=901.5)]))
        await pilot.pause(0.4)
        layouts = LayoutCounter(monkeypatch)
        pane.display = True
        await pilot.pause(0.2)
        assert "901" in pane.section_text("live") and "901" in str(pane.query_one("#health-live").render())
        assert layouts.count == 1


async def test_the_health_views_of_other_tabs_show_the_newest_numbers_when_their_tab_is_opened() -> None:
    from specdec_tui.ui import messages as m

    from .ui_helpers import offline_app

    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:  # wide: the journal tab has its own health view
        await pilot.press("3")
        await pilot.pause()
        app.post_message(m.LogStatsChanged(LogStats().feed([DECODE.format(run=41, gen=1234.5)])))
        await pilot.pause(0.4)
        await pilot.press("2")
        await pilot.pause(0.2)
        view = app.screen.query_one("#journal-health", HealthPane)
        shown = view.query_one("#health-live").render()
        assert "1,234" in str(shown) or "1234" in str(shown), str(shown)
        assert "41" in str(shown)


async def test_a_health_change_reaches_the_three_health_views_without_a_search_of_the_screen() -> None:
    """Issue 34: each health change and each batch of journal figures found the health views by a query of the
    whole main screen (every widget of every tab), on the panel's loop in the middle of a sweep."""
    from specdec_tui.loop.health import HealthSnapshot, HealthState
    from specdec_tui.ui import messages as m

    from .ui_helpers import offline_app

    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        main = app.main
        assert main is not None
        searched: list[str] = []
        query = main.query

        def counted(selector: str | None = None) -> object:
            searched.append(str(selector))
            return query(selector)

        main.query = counted  # type: ignore[assignment,method-assign]
        app.post_message(m.HealthChanged(HealthSnapshot(state=HealthState.READY, status=None, http_ok=True)))
        await pilot.pause(0.2)
        assert searched == []
        views = main.health_views
        assert sorted(view.id or "" for view in views) == ["health-pane", "health-side", "journal-health"]
        assert {view.state for view in views} == {"ready"}
