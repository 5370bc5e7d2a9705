"""The panel's recovery question after a pushed unit failed to start (issue 32: always asked in the panel): a
dialog naming the cause and the ladder's next rung; yes hands it to the host link (`HostLink.recover`: at most
two tries, else the host back on its last good unit), and the result is said in words when it ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from rich.markup import escape

from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.ui import messages as m

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType

    from specdec_tui.ui.host_link import HostLink


class RecoveryPanel(Protocol):
    """What the question and its report use of the panel (`SpecdecApp` is one; ui/app.py is not imported here)."""

    @property
    def screen(self) -> Screen[object]: ...
    @property
    def link(self) -> HostLink | None: ...
    def marker(self, text: str) -> None: ...
    def pop_screen(self) -> object: ...
    def push_screen(self, screen: Screen[Any], callback: ScreenResultCallbackType[Any] | None = None) -> object: ...
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None) -> None: ...

MAX_TRIES = 2
CAUSE_CHARS = 140  # of the cause line: the Doctor section (Health tab) shows it whole


def question(offer: m.RecoveryOffered) -> str:
    cause = terminal_safe(" ".join(offer.finding.evidence[0].line.split()))
    cause = escape(cause if len(cause) <= CAUSE_CHARS else cause[: CAUSE_CHARS - 1] + "…")  # the question fits 80×24
    rung = escape(terminal_safe(offer.finding.fix_words))
    back = "the last good unit" if offer.last_good is not None else "the unit as the last try leaves it"
    return (f"The unit did not start: {cause}\n\nThe doctor's next rung: {rung}.\nApply it and restart? At most "
            f"{MAX_TRIES} tries (a further rung if the first fails); if it still fails, the host goes back on {back}.")


def ask(app: RecoveryPanel, offer: m.RecoveryOffered) -> None:
    """Ask (on top of nothing: the start's own error dialog says less and is closed); yes starts the recovery."""
    from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
    from specdec_tui.ui.screens.error_screen import ErrorScreen

    if isinstance(app.screen, ErrorScreen):
        app.pop_screen()

    def answer(yes: bool | None) -> None:
        if yes and app.link is not None:
            app.marker(f"recovery: {offer.finding.fix_words}")
            app.link.recover(offer)

    app.push_screen(ConfirmScreen(question(offer), yes="Recover", no="Leave it"), answer)


def report(app: RecoveryPanel, result: m.RecoveryEnded) -> None:
    done = result.result
    tries = "; ".join(f"try {n}: {', '.join(f'--{k} {v}' for k, v in step.fix.items())} "
                      f"{'came up' if step.came_up else 'did not come up'}" for n, step in enumerate(done.steps, 1))
    if done.recovered:
        app.marker(f"recovery: came up ({tries})")
        app.notify(f"Recovered in {done.restarts} restart(s): {tries}.", title="Recovered")
        return
    where = ("the host is back on its last good unit" if done.back_on_good else
             "the host is NOT back on its last good unit: check it (u rolls back)")
    note = f" ({terminal_safe(done.note)})" if done.note else ""
    app.marker(f"recovery: failed; {where}")
    app.notify(f"Not recovered after {done.restarts} restart(s){note}: {tries or 'nothing tried'}; {where}.",
               title="Recovery failed", severity="error", timeout=30)
