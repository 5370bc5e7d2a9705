"""What every key-handling helper of the panel reads and calls of it (`PanelPort`): the session, the host's trial
loop and link, whether a benchmark runs or an edit is unpushed, the screens, and the app's notify/push calls.
`HostActions` (`ActionsPanel`) and `SessionSide` (`SessionPanel`) each add the few members only they use; the app
satisfies both (mypy checks it where the app builds them) and no helper imports ui/app.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType

    from specdec_tui.core.session import Session
    from specdec_tui.loop.states import Busy
    from specdec_tui.loop.trial import TrialLoop
    from specdec_tui.ui.host_link import HostLink
    from specdec_tui.ui.screens.main_screen import MainScreen
    from specdec_tui.ui.widgets.config_pane import ConfigPane


class PanelPort(Protocol):
    """The members both helpers use (`SpecdecApp` is one)."""

    session: Session
    host_name: str

    @property
    def trial_loop(self) -> TrialLoop | None: ...
    @property
    def link(self) -> HostLink | None: ...
    @property
    def bench_running(self) -> bool: ...
    @property
    def busy(self) -> Busy: ...
    @property
    def has_unpushed_edit(self) -> bool: ...
    @property
    def main_or_none(self) -> MainScreen | None: ...
    @property
    def screen(self) -> Screen[object]: ...
    async def edit_pane(self) -> ConfigPane | None: ...
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information") -> None: ...
    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
    def push_screen(self, screen: Screen[Any], callback: ScreenResultCallbackType[Any] | None = None) -> object: ...
