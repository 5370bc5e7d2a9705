"""A sweep's "about … left" goes by the time its levels take, not their count (newcomer44's pass, under tmux).

The demo's benchmark (c=1,4,16,32,64) spends most of a value in c=64, past the server's 26 running requests: the
sweep screen said "[2/2] steps=2 · about 17 s left" for the whole of that level's minutes, the level counted as
one in five. The times here are the demo run's, as the screen read them (seconds since the sweep started); the
words are what the status line shows (`core.progress.eta_words`, as `TaskScreen.step_words` calls it).
"""

from __future__ import annotations

from specdec_tui.core.level_pace import LevelPace
from specdec_tui.core.progress import eta_words

LEVELS = (1, 4, 16, 32, 64)
TOOK = {1: 10.0, 4: 9.0, 16: 12.0, 32: 25.0, 64: 150.0}  # seconds each level took in the first value


def run_value(pace: LevelPace, start: float, levels: tuple[int, ...]) -> float:
    pace.value_started()
    now = start + 8.0  # push, restart, health
    for c in levels:
        pace.level_started(c, now)
        now += TOOK[c]
        pace.level_done(c, now)
    return now


def test_the_last_value_s_slow_level_is_most_of_the_time_left() -> None:
    pace = LevelPace()
    first_done = run_value(pace, 0.0, LEVELS)  # value 1 of 2: 214 s
    now = run_value(pace, first_done, LEVELS[:4])  # value 2: four levels done, c=64 starts
    pace.level_started(64, now)
    share = pace.share(LEVELS, 1, now)
    words = eta_words(1 + share, 2, now)
    assert words == "about 2 min 39 s left", words  # c=64 has 150 s to go
    # before: 4 of 5 levels done read as 80 % of the value, and stood there for the whole of c=64
    assert eta_words(1 + min(1.0, 4 / 5), 2, now) == "about 31 s left"
    later = now + 100.0  # 100 s into c=64 the time left has gone down with it, and is still the rest of it
    assert eta_words(1 + pace.share(LEVELS, 1, later), 2, later) == "about 52 s left"


def test_before_every_level_has_run_once_the_share_is_the_count_of_levels_done() -> None:
    pace = LevelPace()
    pace.value_started()
    pace.level_started(1, 0.0)
    pace.level_done(1, 10.0)
    assert pace.share(LEVELS, 1, 11.0) == 1 / 5
    assert pace.share(LEVELS, 2, 11.0) == 1 / 10  # two runs of the value: ten levels
