"""What an exit of the panel waits for: a build of widgets in progress (the Config form's first build, a rebuild
of its rows for a unit with other flags). Torn down in the middle of one, Textual's own `Select` looked for its
parts already removed (NoMatches: a traceback instead of a quit). A build is short (~60 ms), so the exit comes
right after it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass
class ExitHold:
    """Builds in progress, and what waits for the last of them to end (an exit)."""

    held: int = 0
    _waiting: list[Callable[[], None]] = field(default_factory=list)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Hold an exit while the block runs; whatever waited runs as the last hold ends (also on a failure)."""
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1
            if not self.held:
                waiting, self._waiting = self._waiting, []
                for then in waiting:
                    then()

    def when_released(self, then: Callable[[], None]) -> bool:
        """Run `then` once no build holds the exit and say True; False, and nothing kept, when none does."""
        if self.held:
            self._waiting.append(then)
        return bool(self.held)


@runtime_checkable
class HoldsExit(Protocol):
    """An app whose exit waits for builds (`SpecdecApp`); a widget reaches it without importing the app."""

    exit_hold: ExitHold


def exit_held(app: object) -> AbstractContextManager[None]:
    """Hold `app`'s exit over a build (nothing to hold outside such an app: a widget tested alone)."""
    return app.exit_hold.holding() if isinstance(app, HoldsExit) else nullcontext()
