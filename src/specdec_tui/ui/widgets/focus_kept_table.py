"""A `DataTable` whose drawn rows survive a focus change (issue 34: tab keys were the slowest keys of a sweep).

A tab key moves the focus into the tab's table (Bench, Trials, Fleet), and out of the old one. Textual's
DataTable CSS gives a focused table a background tint (`DataTable:focus`), so each focus change restyles the
table, and DataTable's `notify_style_update` then drops every row, cell and line it had drawn: the whole table
was drawn from scratch on every switch, in the frame that shows the tab. Those caches are keyed by the table's
focus state and its base style already, so a row drawn focused is still right the next time the table is
focused, unless what it was drawn with changed: its own and its parts' (cursor, header, stripes) styles, as a
theme change makes. This table keeps them across a restyle and drops them when, for the state it is drawn in,
those looks differ from the ones its rows were drawn with. Showing the tab also sends the table a Resize of the
size it has, which DataTable counted as a change (every row keyed to the old count): such a Resize is not
passed on."""

from __future__ import annotations

from typing import TypeVar

from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import PseudoClasses, Widget
from textual.widgets import DataTable
from textual.widgets.data_table import CursorType

from specdec_tui.ui.textual_compat import table_cell_styles_recomputed, table_rows_redrawn

CellType = TypeVar("CellType")
Looks = tuple[Style, tuple[Style, ...]]


class FocusKeptTable(DataTable[CellType]):
    """DataTable, drawn rows kept across the restyles that do not change how they look."""

    def __init__(self, *, id: str, cursor_type: CursorType = "row", zebra_stripes: bool = True) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type=cursor_type, zebra_stripes=zebra_stripes)
        self._drawn_with: dict[PseudoClasses, Looks] = {}  # a focus state → the looks its cached rows were drawn with
        self._drawn_in: PseudoClasses | None = None  # the state of the last draw
        self._parts = tuple(sorted(self.COMPONENT_CLASSES))
        self._sized: tuple[Size, Size, Size] | None = None  # the size, virtual size and container size last given

    def on_resize(self, event: events.Resize) -> None:
        """A Resize that changes no size is not passed on: DataTable's own handler counts every Resize as a change
        and keys no drawn row to the old count, and the table gets one each time its tab is shown (Textual sends a
        Resize to every widget a layout shows)."""
        sized = (event.size, event.virtual_size, event.container_size)
        if sized == self._sized:
            event.prevent_default()
        self._sized = sized

    def notify_style_update(self) -> None:
        # Widget's, not DataTable's (which drops every cached row): the rows are checked as they are drawn
        Widget.notify_style_update(self)
        table_cell_styles_recomputed(self)  # keyed without the focus state: recomputed on each restyle, as Textual does
        self.refresh()

    def looks(self) -> Looks:
        """What a drawn row depends on beyond the cache keys: the table's style and its parts' (cached by Textual)."""
        return self.rich_style, tuple(self.get_component_rich_style(part) for part in self._parts)

    def render_lines(self, crop: Region) -> list[Strip]:
        state, looks = self.get_pseudo_class_state(), self.looks()
        if state != self._drawn_in:  # the cursor's cell styles are cached without the state: recomputed for it
            self._drawn_in = state
            table_cell_styles_recomputed(self)
        drawn_with = self._drawn_with.get(state)
        if drawn_with != looks:
            if drawn_with is not None:  # rows drawn in this state with other looks (a theme change): all redrawn
                table_rows_redrawn(self)
                self._drawn_with.clear()
            self._drawn_with[state] = looks
        return super().render_lines(crop)
