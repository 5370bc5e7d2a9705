"""How much of a sweep's value is done, by the time its levels take, not by their count.

A benchmark's levels differ tenfold in length: at c=64 past the server's max running requests the requests queue,
and that one level took 3 of a value's 4 minutes on the demo. Counted as one level in five it showed "about 17 s
left" for the whole of those 3 minutes (a newcomer's pass). Each level's time is learned the first time it runs;
once every level of the value has run once the share done is by those times (with the running level's own time so
far), before that by the count of levels done, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["LevelPace"]


@dataclass
class LevelPace:
    """The levels' durations (seconds, the first run of each concurrency) and the value on its way."""

    seconds: dict[int, float] = field(default_factory=dict)
    done: list[int] = field(default_factory=list)  # levels of the value on its way, over its runs
    running: int | None = None
    running_since: float = 0.0

    def value_started(self) -> None:
        self.done, self.running = [], None

    def level_started(self, concurrency: int, now: float) -> None:
        self.running, self.running_since = concurrency, now

    def level_done(self, concurrency: int, now: float) -> None:
        if self.running == concurrency:
            self.seconds.setdefault(concurrency, max(0.0, now - self.running_since))
        self.done.append(concurrency)
        self.running = None

    def share(self, levels: Sequence[int], runs: int, now: float) -> float:
        """The value's share done, 0 to 1: `levels` are the profile's concurrencies, run `runs` times each."""
        planned = len(levels) * runs
        if not planned:
            return 0.0
        if any(c not in self.seconds for c in levels) or sum(self.seconds[c] for c in levels) <= 0:
            return min(1.0, len(self.done) / planned)  # a level not yet timed: by the count, as before
        total = runs * sum(self.seconds[c] for c in levels)
        spent = sum(self.seconds.get(c, 0.0) for c in self.done)
        if self.running is not None:  # the running level's time so far, at most what it took before
            spent += min(self.seconds[self.running], max(0.0, now - self.running_since))
        return min(1.0, spent / total)
