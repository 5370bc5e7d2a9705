"""The journal's line view (`ui/widgets/line_view.py`): what it shows, that it paints a line once while the line
stays (repaints and scrolling reuse it), that writing starts no worker thread, and that selection still works."""

from __future__ import annotations

import gc

from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.selection import Selection

from specdec_tui.ui.widgets.line_view import LineView, PaintedLine, display_text

BOLD = Style(bold=True)


class Painted:
    """A painter that counts its calls: the first three columns bold."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, line: str) -> list[tuple[int, Style]]:
        self.calls.append(line)
        return [(min(3, len(line)), BOLD)]


class ViewApp(App[None]):
    def __init__(self, max_lines: int = 100) -> None:
        super().__init__()
        self.painter = Painted()
        self.max_lines = max_lines

    def compose(self) -> ComposeResult:
        yield LineView(max_lines=self.max_lines, paint=self.painter, id="view")


def shown(view: LineView) -> list[str]:
    """The text of each row of the view, as it would be painted now."""
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


async def test_lines_show_oldest_first_and_the_oldest_leave_past_max_lines() -> None:
    app = ViewApp(max_lines=3)
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(LineView)
        view.write_lines(["a", "b", "c"])
        await pilot.pause()
        assert shown(view)[:3] == ["a", "b", "c"]
        view.write_lines(["d\ne"])  # a string with a newline is two lines
        await pilot.pause()
        assert list(view.lines) == ["c", "d", "e"]
        assert shown(view)[:4] == ["c", "d", "e", ""]  # no line of the old numbering painted in its place


async def thirty_lines_at_the_end(app: ViewApp, pilot: Pilot[None]) -> LineView:
    """The app's view holding 30 lines, scrolled to the last and painted."""
    view = app.query_one(LineView)
    view.write_lines([f"line {i}" for i in range(30)])
    view.scroll_end(animate=False, immediate=True)
    await pilot.pause()
    return view


async def test_a_line_is_painted_once_while_it_stays() -> None:
    app = ViewApp()
    async with app.run_test(size=(40, 6)) as pilot:
        view = await thirty_lines_at_the_end(app, pilot)
        first = len(app.painter.calls)
        assert 0 < first <= 2 * view.size.height  # the visible lines only, not the 30 written
        view.refresh()
        await pilot.pause()
        view.scroll_to(y=view.scroll_y - 2, animate=False, immediate=True)
        await pilot.pause()
        assert len(app.painter.calls) - first <= 2  # the two rows scrolled in; the others came from the cache
        assert view.render_line(0).text.startswith(f"line {30 - view.size.height - 2}")


def painted_lines_alive() -> int:
    return sum(isinstance(o, PaintedLine) for o in gc.get_objects())


async def test_painted_lines_a_restyle_drops_are_freed_at_once_not_left_to_the_collector() -> None:
    """A theme change or a selection drops every painted line; kept in Textual's LRUCache (a ring of linked lists)
    they stayed as cyclic garbage until a full collection walked them, while keys waited (issue 34)."""
    app = ViewApp()
    async with app.run_test(size=(40, 6)) as pilot:
        view = await thirty_lines_at_the_end(app, pilot)
        gc.collect()
        gc.disable()
        try:
            assert painted_lines_alive() > 0
            view.notify_style_update()
            assert painted_lines_alive() == 0
        finally:
            gc.enable()
        await pilot.pause()
        assert shown(view)[-1] == "line 29"  # painted again from the lines


async def test_writing_starts_no_worker_and_the_width_counts_wide_characters() -> None:
    app = ViewApp()
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(LineView)
        view.write_lines(["x" * 50, "日本語" * 20])  # 60 characters, 120 columns
        await pilot.pause()
        assert len(app.workers) == 0  # Log measured each write on a thread, which took the GIL from the keys
        assert view.virtual_size.width == 120


async def test_painted_runs_and_the_selection_show() -> None:
    app = ViewApp()
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(LineView)
        view.write_lines(["abcdef", "ghijkl"])
        await pilot.pause()
        first = view.render_line(0)
        assert [seg.text for seg in first if seg.text.strip()] == ["abc", "def"]
        assert next(iter(first)).style is not None and next(iter(first)).style.bold
        selection = Selection(Offset(1, 0), Offset(3, 1))
        assert view.get_selection(selection) == ("bcdef\nghi", "\n")
        app.screen.selections = {view: selection}
        await pilot.pause()
        selected = view.app.screen.get_component_rich_style("screen--selection")
        row = view.render_line(0)
        assert any(seg.text.startswith("bc") and seg.style is not None and seg.style.bgcolor == selected.bgcolor
                   for seg in row)


def test_tabs_and_control_characters_are_shown_as_log_shows_them() -> None:
    assert display_text("a\tb") == "a       b"
    assert display_text("bell\x07") == "bell�"
    assert display_text("plain") == "plain"


async def test_more_lines_lay_the_screen_out_only_when_a_scroll_bar_comes(monkeypatch) -> None:
    """Each write grew the view's extent and Textual re-laid out the whole screen for it (~25 ms): on every write
    until max_lines were there. Now only the write that brings the scroll bar does; the bar follows the rest."""
    from textual.screen import Screen

    layouts: list[int] = []
    original = Screen._refresh_layout

    def counted(screen: Screen, *args: object, **kwargs: object) -> None:
        layouts.append(1)
        original(screen, *args, **kwargs)  # type: ignore[arg-type]

    app = ViewApp(max_lines=1000)
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(LineView)
        view.write_lines([f"line {i}" for i in range(3)])
        await pilot.pause()
        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        view.write_lines([f"line {i}" for i in range(3, 20)])  # more than the view holds: the bar comes
        await pilot.pause()
        assert view.show_vertical_scrollbar and layouts  # laid out for the bar
        while layouts:  # the bar's own layout may take a second pass: let it settle
            layouts.clear()
            await pilot.pause()
        for start in range(20, 200, 20):
            view.write_lines([f"line {i}" for i in range(start, start + 20)])
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
        assert layouts == []
        assert view.vertical_scrollbar.window_virtual_size == 200  # the bar's thumb is sized for every line
        assert view.render_line(view.size.height - 1).text.startswith("line 199")


async def test_a_mouse_drag_selects_the_text_under_it() -> None:
    """The rows of a frame carry no text positions; the selection asks the view for the row under the mouse."""
    app = ViewApp()
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(LineView)
        view.write_lines(["abcdef", "gh │ ij"])
        await pilot.pause()
        await pilot.mouse_down(view, offset=(1, 0))
        await pilot.hover(view, offset=(5, 1))
        await pilot.mouse_up(view, offset=(5, 1))
        await pilot.pause()
        assert app.screen.get_selected_text() == "bcdef\ngh │ i"


def test_characters_taken_as_one_cell_each_are_one_cell_for_rich() -> None:
    """The fast cut (a slice) is taken only for text Rich, and so Textual, counts one cell a character."""
    from rich.cells import get_character_cell_size

    from specdec_tui.ui.widgets.line_view import one_cell_each

    ranges = [(0x20, 0x7E), (0xA0, 0x2FF), (0x370, 0x482), (0x2500, 0x257F)]
    chars = [chr(c) for start, end in ranges for c in range(start, end + 1)]
    assert one_cell_each("".join(chars))
    assert all(get_character_cell_size(c) == 1 for c in chars)
    assert not one_cell_each("日本") and not one_cell_each("e\u0301")  # wide; a combining accent (no cell)


async def test_a_decode_line_scrolled_sideways_shows_its_columns() -> None:
    """Decode lines hold "│" (not ASCII): cut by characters, each still in its column; a wide line by cells."""
    app = ViewApp()
    async with app.run_test(size=(12, 4)) as pilot:
        view = app.query_one(LineView)
        view.write_lines(["running: 3 │ queue: 0 │ gen: 12.5", "日本語日本語日本語"])
        await pilot.pause()
        view.scroll_to(x=9, animate=False, immediate=True)
        await pilot.pause()
        assert shown(view)[:2] == ["3 │ queue: 0", " 語日本語"]  # column 9 halves 本: a space, as Textual cuts
