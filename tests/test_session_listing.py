"""`session list` and the panel's `o` screen read only what they list: each session's own fields and its trials'
headlines from the first line of its cache (core/session_cache.py), no trial parsed. They read every session
whole (issue 36's leftover): 20 sessions of 1,000 trials for one row each. Counted here, not timed
(bench/session_list.py times it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, load_session, save_session
from specdec_tui.core.session_cache import cache_path
from specdec_tui.loop.sessions import list_sessions
from specdec_tui.ui.screens.sessions_screen import SessionsScreen

from .ui_helpers import offline_app, started

TRIALS = 120


def big_session(host: str, day: int, trials: int = TRIALS) -> Session:
    """`trials` trials; trial 7 is the best at c=1 (its tok/s stands out)."""
    return Session(host=host, unit="sglang.service", created=datetime(2026, 3, day, 9, 30, tzinfo=UTC), trials=[
        Trial(id=i, unit_text="[Service]\nExecStart=/bin/true\n", status="ok", label=f"t{i}",
              levels=[LevelResult(concurrency=1, requests=8, output_tok_s=500.0 if i == 7 else 100.0 + i % 50),
                      LevelResult(concurrency=4, requests=8, output_tok_s=300.0)])
        for i in range(1, trials + 1)])


@pytest.fixture
def trials_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many Trial objects were built since the fixture began: a trial parsed from a file is one."""
    made = [0]
    init = Trial.__init__

    def counting(self: Trial, *args: object, **kwargs: object) -> None:
        made[0] += 1
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Trial, "__init__", counting)
    yield made


def saved(directory: Path, count: int = 3) -> list[Path]:
    paths = []
    for n in range(count):
        path = directory / f"s{n}.toml"
        save_session(big_session(f"box-{n}", n + 1), path)
        assert cache_path(path).exists()  # the save wrote the cache a list reads
        paths.append(path)
    return paths


def test_listing_parses_no_trial_and_says_what_the_whole_read_said(tmp_path: Path, trials_made: list[int]) -> None:
    saved(tmp_path)
    trials_made[0] = 0
    rows = list_sessions(tmp_path)
    assert trials_made[0] == 0  # the rows come from the index: not one trial built
    assert [(r.host, r.trials, r.best_c1_tok_s, r.best_c1_trial) for r in rows] == [
        ("box-2", TRIALS, 500.0, "t7"), ("box-1", TRIALS, 500.0, "t7"), ("box-0", TRIALS, 500.0, "t7")]
    whole = load_session(tmp_path / "s0.toml")  # the anchor: the whole read builds every trial
    assert trials_made[0] == TRIALS and len(whole.trials) == TRIALS


def test_a_session_edited_by_hand_is_listed_as_it_now_reads(tmp_path: Path, trials_made: list[int]) -> None:
    """The cache serves only the TOML it was written with: edited, the TOML is read (and cached again)."""
    path = saved(tmp_path, 1)[0]
    path.write_text(path.read_text().replace('host = "box-0"', 'host = "edited-box"'))
    assert [r.host for r in list_sessions(tmp_path)] == ["edited-box"]
    trials_made[0] = 0
    assert [r.host for r in list_sessions(tmp_path)] == ["edited-box"] and trials_made[0] == 0


def test_session_list_cli_parses_no_trial(capsys: pytest.CaptureFixture[str], trials_made: list[int]) -> None:
    sessions_dir().mkdir(parents=True, exist_ok=True)
    saved(sessions_dir(), 2)
    trials_made[0] = 0
    assert main(["session", "list"]) == 0
    out = capsys.readouterr().out
    assert trials_made[0] == 0
    assert "box-0" in out and "box-1" in out and str(TRIALS) in out and "500.0 (c=1, trial 7)" in out


async def test_the_o_screen_lists_without_parsing_a_trial(tmp_path: Path, trials_made: list[int]) -> None:
    saved(tmp_path, 2)
    app = offline_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        trials_made[0] = 0
        app.push_screen(SessionsScreen(tmp_path))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionsScreen) and screen.table.row_count == 2
        assert trials_made[0] == 0
        assert screen.cell_text(0, "host") == "box-1" and screen.cell_text(0, "best_c1").startswith("500.0")
        assert screen.cell_text(0, "trials") == str(TRIALS)
