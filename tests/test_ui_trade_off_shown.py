"""The Trials tab's trade-off points are made while the tab is shown, and once when it is shown again (issue 34: a
1,000-trial session's points cost ~30 ms, made on every change of a sweep while another tab was on screen)."""

from __future__ import annotations

import dataclasses

import pytest

from specdec_tui.core import trade_off
from specdec_tui.core.session import Trial
from tests.test_report_html import seed_session

from .ui_helpers import offline_app, started, wait_for


def another(trial: Trial, new_id: int) -> Trial:
    return dataclasses.replace(trial, id=new_id, levels=list(trial.levels), label=f"again #{new_id}")


async def test_the_points_are_made_when_the_trials_tab_is_shown_and_follow_every_change_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    points_of = trade_off.trade_off_points
    monkeypatch.setattr(trade_off, "trade_off_points", lambda session: made.append(len(session.trials)) or points_of(session))
    trials = seed_session().trials
    app = offline_app(trials=trials[:2])
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        chart = app.main.trade_off_chart
        for i in (3, 4):  # changes while the Config tab is shown: nothing made
            app.session.trials.append(trials[i - 1])
            app.show_trials()
            await pilot.pause()
        assert made == [] and chart.points == []
        await pilot.press("5")
        await wait_for(pilot, lambda: len(chart.points) == 4, "the four trials as points once the tab shows")
        assert made == [4] and chart.front == {1, 2, 3}
        app.session.trials.append(another(trials[2], 5))  # a change while the tab is shown: made at once
        app.show_trials()
        assert made == [4, 5] and [p.trial_id for p in chart.points][-1] == 5
        await pilot.press("4")
        await pilot.pause()
        for new_id in (6, 7, 8):  # a sweep's changes behind the Bench tab: none made
            app.session.trials.append(another(trials[0], new_id))
            app.show_trials()
        await pilot.pause()
        assert made == [4, 5]
        await pilot.press("5")
        await wait_for(pilot, lambda: len(chart.points) == 8, "the newest session's points, made once")
        assert made == [4, 5, 8]
