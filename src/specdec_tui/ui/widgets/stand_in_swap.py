"""Stand-ins replaced by their real widgets, each at its place, in one frame; the focus goes with them.

The Config form draws light stand-ins for its fields on its first frame (`SelectStandIn`, `InputStandIn`: issue
34's cold start) and puts the real fields in their places right after. Own module: the form lays out its rows; how a
widget is swapped for another without a frame between, and without the focus wandering, is here.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget


async def swap_in(parent: Widget, pairs: Sequence[tuple[Widget, Widget]]) -> None:
    """Each (stand-in, real) of `parent`'s children: the stand-in goes, the real widget (with the same id) comes
    where it was. Frames are held meanwhile (no frame shows a row without its field). A stand-in with the focus
    hands it to its real widget; the focus is held nowhere meanwhile (Textual would move it to a neighbour), and
    it is not given when something else took it meanwhile (a click)."""
    pairs = [(stand_in, real) for stand_in, real in pairs if stand_in.parent is parent]
    if not pairs:
        return
    screen = parent.screen
    # given the focus, a stand-in may not be told yet (its has_focus comes with the event): the screen's word
    takes = next((real for stand_in, real in pairs if screen.focused is stand_in), None)
    children = list(parent.children)
    places = [(children[children.index(stand_in) - 1], real) for stand_in, real in pairs]  # after their row's name
    with parent.app.batch_update():
        if takes is not None:
            screen.set_focus(None)
        await parent.remove_children([stand_in for stand_in, _ in pairs])
        mounts = [parent.mount(real, after=before) for before, real in places]
        for mounted in mounts:
            await mounted
        if takes is not None and screen.focused is None:
            screen.set_focus(takes, scroll_visible=False)
