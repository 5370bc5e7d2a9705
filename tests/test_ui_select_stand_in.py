"""The Config form's first frame draws a stand-in for the algorithm's dropdown (issue 34's cold start); the real
Select takes its place right after. What a user sees and does must not tell them apart: the row looks the same,
and a key typed on that frame does what it does on the Select (opens the dropdown, moves on with Tab), in order
with the keys behind it."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import pytest
from rich.color import Color
from rich.style import Style
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Select

from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.textual_compat import frame_cells, make_compact, watch_frames
from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.select_stand_in import SelectStandIn

from .test_ui_config_typing import STEPS, burst, field, settle, unit_flags
from .ui_helpers import offline_app, started, wait_for

ALGORITHM = "speculative-algorithm"
Cell = tuple[str, tuple[object, ...]]


def colour(color: Color | None) -> tuple[object, ...] | None:
    return None if color is None else (color.type, color.number, color.triplet)


def look(char: str, style: Style | None) -> Cell:
    """One cell as its character and what its style draws. A blank cell's foreground and text attributes are not
    seen: left out. Styles, not escape codes: Rich keeps a style's codes from the first console that rendered it, so
    the same colour could read as truecolor in one frame and 16 colours in the next (an earlier test's screenshot)."""
    if style is None:
        return char, ()
    drawn = (style.bgcolor and colour(style.bgcolor), style.reverse)
    if not char.isspace():
        drawn += (colour(style.color), style.bold, style.dim, style.italic, style.underline, style.strike)
    return char, drawn


def row_cells(app: App[Any], y: int, x: int, width: int) -> list[Cell]:
    return [look(char, style) for char, style in frame_cells(app)[y][x:x + width]]


class OneRow(App[None]):
    """A compact Select (as the form builds it) or the stand-in, alone on a row of the form's width."""

    CSS = "Screen > * { width: 1fr; height: 1; }"
    AUTO_FOCUS = None

    def __init__(self, *, real: bool, value: str | None, focused: bool, theme: str) -> None:
        super().__init__(ansi_color=theme == "ansi")
        self.real, self.value, self.focused_at_start = real, value, focused
        self.theme = "textual-dark" if theme == "ansi" else theme

    def compose(self) -> ComposeResult:
        if self.real:
            select: Select[str] = Select([(c, c) for c in ("EAGLE", "NEXTN")], value=self.value or Select.NULL,
                                         prompt="(none)", id="field")
            make_compact(select, Select.compact)
            yield select
        else:
            yield SelectStandIn(self.value, prompt="(none)", id="field")

    def on_mount(self) -> None:
        if self.focused_at_start:
            self.query_one("#field").focus()


async def drawn(*, real: bool, value: str | None, focused: bool, theme: str) -> list[Cell]:
    app = OneRow(real=real, value=value, focused=focused, theme=theme)
    async with app.run_test(size=(30, 2)) as pilot:
        await pilot.pause()
        return row_cells(app, 0, 0, 30)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "ansi"])  # ansi: the terminal's colours (ansi_color)
async def test_the_stand_in_is_drawn_as_the_compact_select_with_a_value_or_the_prompt_focused_or_not(theme: str) -> None:
    for value in ("NEXTN", None):
        for focused in (False, True):
            select = await drawn(real=True, value=value, focused=focused, theme=theme)
            assert "▼" in "".join(char for char, _ in select)
            assert await drawn(real=False, value=value, focused=focused, theme=theme) == select, (value, focused)


def on_form_frame(app: SpecdecApp, then: Callable[[SpecdecApp], None]) -> list[list[Cell]]:
    """Runs `then` once, right after the panel's first frame that shows the form, while the stand-in is still there
    (asserted); returns [the algorithm row's cells on that frame]."""
    seen: list[list[Cell]] = []

    def typed() -> None:
        assert app.screen.query(SelectStandIn), "the keys come while the stand-in is on screen"
        then(app)

    def frame(screen: Screen[Any], dropped: bool) -> None:
        stand_ins = list(screen.query(SelectStandIn))
        if seen or dropped or not any(pane.display for pane in screen.query("#config-pane")) or not stand_ins:
            return
        region = stand_ins[0].region
        seen.append(row_cells(app, region.y, region.x, region.width))
        # as the terminal driver sends keys: from outside any widget (a key made in the screen's own context is
        # taken for one the screen sent, and Textual does not bubble it back up to the App, where bindings run)
        asyncio.get_running_loop().call_soon(typed, context=contextvars.Context())

    watch_frames(app, frame)
    return seen


@pytest.mark.parametrize("after_a_screenshot", [True, False])
async def test_the_form_s_first_frame_draws_the_stand_in_and_the_real_select_takes_its_place_looking_the_same(
        after_a_screenshot: bool) -> None:
    if after_a_screenshot:  # as an earlier test in the suite did: Rich kept its truecolor codes for the next console
        async with offline_app().run_test(size=(120, 40)) as pilot:
            await started(pilot)
            pilot.app.export_screenshot()
    app = offline_app()
    first = on_form_frame(app, lambda _: None)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.pause()
        assert first, "the form's first frame drew the stand-in"
        select = app.screen.query_one(f"#{widget_id('field', ALGORITHM)}", Select)
        assert not app.screen.query(SelectStandIn) and app.focused is select and select.value == "NEXTN"
        # the focus given on mount is not drawn yet on that frame (Textual's Select was drawn so too): compared
        # with the Select not focused; focused, the two are compared above
        app.screen.set_focus(None)
        region = select.region
        await wait_for(  # once drawn again without the focus
            pilot, lambda: row_cells(app, region.y, region.x, region.width) == first[0],
                       "the real Select drawn as the stand-in was", steps=100)


async def test_down_typed_on_the_form_s_first_frame_opens_the_dropdown_and_the_choice_edits_the_unit() -> None:
    app = offline_app()
    first = on_form_frame(app, lambda app: burst(app, "down"))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert first
        select = app.screen.query_one(f"#{widget_id('field', ALGORITHM)}", Select)
        await wait_for(pilot, lambda: select.expanded, "the dropdown open")
        await pilot.press("up", "enter")  # NEXTN's neighbour above
        await settle(pilot, app, lambda: not select.expanded and select.value != "NEXTN"
                     and unit_flags(app).get(ALGORITHM) == select.value, "the choice in the unit")
        assert app.focused is select


async def test_tab_and_keys_typed_on_the_form_s_first_frame_land_in_the_steps_field_in_order() -> None:
    app = offline_app()
    first = on_form_frame(app, lambda app: burst(app, "tab", "end", "backspace", "4", "backspace", "7"))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert first
        steps = field(app, STEPS)
        await settle(pilot, app, lambda: steps.value == "7" and unit_flags(app).get(STEPS) == "7", "steps 7")
        assert app.focused is steps and unit_flags(app).get(ALGORITHM) == "NEXTN"
