"""Stand-ins replaced by their real widgets, each at its place, in one frame; the focus goes with them.

The Config form draws light stand-ins for its fields on its first frame (`SelectStandIn`, `InputStandIn`: issue
34's cold start) and puts the real fields in their places right after. Own module: the form lays out its rows; how a
widget is swapped for another without a frame between, and without the focus wandering, is here.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget


async def swap_in(parent: Widget, pairs: Sequence[tuple[Widget, Widget]]) -> None:
    """Each (stand-in, real) of `parent`'s children: the real widget comes right after its stand-in, then the
    stand-in goes. Frames are held meanwhile (no frame shows both, or a row without its field). A stand-in with the
    focus hands it straight to its real widget, so the focus is never elsewhere: a key sent meanwhile reaches the
    stand-in (which passes on what the field takes) or the real field, never a neighbour or the screen."""
    pairs = [(stand_in, real) for stand_in, real in pairs if stand_in.parent is parent]
    if not pairs or not parent.is_attached:
        return
    screen = parent.screen
    with parent.app.batch_update():
        mounts = [parent.mount(real, after=stand_in) for stand_in, real in pairs]
        for mounted in mounts:
            await mounted
        # given the focus, a stand-in may not be told yet (its has_focus comes with the event): the screen's word
        takes = next((real for stand_in, real in pairs if screen.focused is stand_in), None)
        if takes is not None:
            screen.set_focus(takes, scroll_visible=False)
        await parent.remove_children([stand_in for stand_in, _ in pairs])
