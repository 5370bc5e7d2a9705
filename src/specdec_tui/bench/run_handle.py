"""What `BenchRun` (thread) and `ProcessRun` (spawned process) share: the constructor arguments, a
background thread that delivers events, join/running, and the levels finished so far."""

from __future__ import annotations

import threading
from collections.abc import Callable

from specdec_tui.bench.events import BenchEvent
from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import LevelResult

Emit = Callable[[BenchEvent], None]


class RunHandle:
    """Subclasses implement `_main` (runs on the handle's thread) and `cancel`, and may prepare in `_setup`."""

    thread_name = "specdec-bench"

    def __init__(
        self,
        base_url: str,
        profile: BenchProfile,
        on_event: Emit,
        *,
        api_key: str | None = None,
        model: str | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self._base_url = base_url
        self._profile = profile
        self._api_key = api_key
        self._model = model
        self._on_event = on_event
        self._on_exit = on_exit
        self._thread = threading.Thread(target=self._main, name=self.thread_name, daemon=True)
        self._lock = threading.Lock()
        self.levels: list[LevelResult] = []
        self._setup()

    def _setup(self) -> None:
        """What a subclass prepares once the shared state is set (its loop slot, its pipe and process)."""

    def start(self) -> RunHandle:
        self._thread.start()
        return self

    def cancel(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _main(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _exited(self) -> None:
        if self._on_exit is not None:
            self._on_exit()
