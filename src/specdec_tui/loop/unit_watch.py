"""Whether the unit on the host changed behind this panel's back: a push from another terminal, a hand edit and
daemon-reload, a second specdec-tui. The one rule the panel's re-read before `p` and its periodic check call.

Why (issue 35): nothing read the host's unit between two pushes, so the form kept showing the unit it had read at
start and `p` silently pushed the operator's edit over whatever another terminal had put there.

The demo's own rewrite of its `--port` (a free port written in place of a taken one when a workspace is opened,
`hosts.local.workspace`) is no one's change: on a local host a difference in the port alone is carried into the
edit without a word, never asked about.
"""

from __future__ import annotations

from specdec_tui.hosts.local.workspace import unit_port, with_port
from specdec_tui.loop.busy import UnitChangedElsewhere
from specdec_tui.loop.states import UnitChange

__all__ = ["UnitChangedElsewhere", "unit_change", "with_port_of"]


def unit_change(before: str, now: str, *, port_rewrites: bool) -> UnitChange:
    """SAME, PORT (a local host whose unit differs in its --port alone) or ELSEWHERE."""
    if before == now:
        return UnitChange.SAME
    if port_rewrites:
        port = unit_port(now)
        if port is not None and unit_port(before) is not None and with_port(before, port) == now:
            return UnitChange.PORT
    return UnitChange.ELSEWHERE


def with_port_of(edit: str, now: str) -> str:
    """The edit with the host unit's --port (the demo rewrote it): what a push must send so it does not put the
    old, taken port back."""
    port = unit_port(now)
    return edit if port is None or unit_port(edit) is None else with_port(edit, port)
