"""Intervals wherever a comparison is made (issue 33), one wording (`core.confidence.compare_samples`): a sweep's
winner against its runner-up (CLI reasons and the panel's result read `SweepChoice`), a replay's then against now,
the HTML report's best per level against the runner-up, and the panel's compare screen — each naming a winner only
when the 95 % intervals separate, else "no clear difference" and how many requests would tell. The levels are
measured against the real truth server (test_compare_confidence's): one twice as fast as the other, or the same."""

from __future__ import annotations

from pathlib import Path

from specdec_tui.core.compare import best_confidence
from specdec_tui.core.report_html import session_html
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.sweep_rules import choose
from specdec_tui.loop.replay import ReplayPair
from specdec_tui.ui.screens.compare_screen import CompareScreen

from .test_compare_confidence import _levels
from .ui_helpers import offline_app, started


def trial(i: int, levels: list[LevelResult], label: str = "") -> Trial:
    return Trial(id=i, unit_text=f"unit {i}", levels=levels, status="ok", label=label or f"t{i}")  # each its own unit


async def test_every_view_names_a_winner_only_when_the_intervals_separate(tmp_path: Path) -> None:
    slow, fast, fast_again = await _levels(tmp_path, 8.0), await _levels(tmp_path, 4.0), await _levels(tmp_path, 4.0)

    # the sweep (one run per value: intervals over requests), CLI and panel both print its reasons and headline
    clear = choose({"1": [trial(1, slow)], "2": [trial(2, fast)]})
    assert clear.confidence is not None and clear.confidence.winner == "value 2"
    assert any(r.startswith("confidence: per-request tok/s value 2 ") and "95 % intervals separate" in r
               for r in clear.reasons), clear.reasons
    assert clear.headline("steps") == "Winner: steps 2"
    tie = choose({"1": [trial(1, fast)], "2": [trial(2, fast_again)]})
    assert tie.confidence is not None and tie.confidence.winner is None
    tied = tie.confidence.text
    assert ("no clear difference: within run-to-run noise (±3 %, the default)" in tied and "repeats each would tell" in tied) or (
        # the two runs read the same figure: said equal, with no count of repeats
        "no clear difference: the figures are equal (" in tied and "no count of repeats would tell them apart" in tied), tied
    assert "(over requests, with run-to-run noise" in tied
    assert tie.headline("steps").startswith(f"Pick: steps {tie.winner.value if tie.winner else ''} (no clear difference")

    # the replay: a drift the intervals tell apart, and one they do not
    drifted = ReplayPair(trial(1, fast), trial(2, slow)).confidence_line()
    assert drifted.startswith("trial 1 → 2: c=4 per-request tok/s then ") and "then is better than now" in drifted
    held = ReplayPair(trial(1, fast), trial(2, fast_again)).confidence_line()
    assert "no clear difference" in held

    # the HTML report: the best per level against the runner-up
    session = Session(host="h", unit="u", trials=[trial(1, slow, "slow"), trial(2, fast, "fast")])
    line = best_confidence(session, 4)
    assert line.startswith("c=4: best #2 fast against #1 slow: per-request tok/s #2 ") and "#2 is better than #1" in line
    html = session_html(session)
    assert '<ul id="confidence">' in html and "#2 is better than #1 (95 % intervals separate)" in html

    # the compare screen
    app = offline_app(trials=[trial(1, slow, "slow"), trial(2, fast, "fast"), trial(3, fast_again, "again")])
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        app.push_screen(CompareScreen(app.session, 1, 2))
        await pilot.pause()
        screen = app.screen
        text = str(screen.query_one("#compare-confidence").render())
        assert "c=4: per-request tok/s A " in text and "B is better than A (95 % intervals separate)" in text
        await pilot.press("right_square_bracket")  # 2 → 3: the same server twice
        await pilot.pause()
        text = str(screen.query_one("#compare-confidence").render())
        assert "no clear difference" in text and "is better" not in text


def test_levels_without_per_request_figures_say_so() -> None:
    old = LevelResult(concurrency=1, requests=8, output_tok_s=100.0)
    v = ReplayPair(trial(1, [old]), trial(2, [old])).confidence()
    assert v is not None and v.winner is None and v.text == "c=1 per-request tok/s: no interval (then kept no per-request figures)"


async def test_replay_reproduces_by_intervals_where_levels_kept_requests_else_by_the_tolerance(tmp_path: Path) -> None:
    """Issue 33 (4): the replay's "reproduces?" is decided by then-against-now intervals where both levels kept
    per-request figures — not by ±10 % — and says which rule it used; old levels fall back to ±tolerance."""
    from specdec_tui.cli.render import make_console, replay_table
    from specdec_tui.loop.replay import ReplayOutcome

    slow, fast, fast_again = await _levels(tmp_path, 8.0), await _levels(tmp_path, 4.0), await _levels(tmp_path, 4.0)
    same = ReplayPair(trial(1, fast), trial(2, fast_again))
    assert same.drift[4] != 0.0  # two runs never measure the same figure …
    assert same.reproduces(0.0) and same.verdict(0.0) == "within the noise (95 % intervals)"  # … the noise says so
    halved = ReplayPair(trial(1, fast), trial(2, slow))  # ±1000 % would call it reproduced
    assert not halved.reproduces(1000.0) and halved.verdict(1000.0) == "drifted at c=4 (95 % intervals)"
    assert halved.reproduction(1000.0).words() == "no: drift at c=4 (95 % intervals)"
    old = [LevelResult(concurrency=4, requests=40, output_tok_s=100.0)]  # saved before intervals
    drifted_old = ReplayPair(trial(1, old), trial(2, [LevelResult(concurrency=4, requests=40, output_tok_s=85.0)]))
    assert not drifted_old.reproduces(10.0) and drifted_old.verdict(10.0) == "drifted at c=4 (±10%)"
    assert drifted_old.reproduces(20.0) and drifted_old.verdict(20.0) == "within ±20% (no interval)"
    outcome = ReplayOutcome(pairs=[same, halved, drifted_old])
    assert outcome.held_words(10.0) == ("1 of 3 measured trial(s) reproduced by 95 % intervals (then against now), "
                                        "within ±10% where a level kept fewer than 8 per-request figures")
    console = make_console()
    with console.capture() as cap:
        console.print(replay_table(outcome, 10.0))
    table = " ".join(cap.get().split())
    assert "within the noise (95 % intervals)" in table and "drifted at c=4 (±10%)" in table
