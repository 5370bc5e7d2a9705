"""The Config form's value fields are stand-ins on the form's first frame (issue 34's cold start); the real fields
take their places right after. A user must not tell them apart: each looks the same, and keys typed on that frame
land as typed, in the field the Tab moved to, in order (a character, an editing key, a paste), while keys the field
does not take (Tab, a tab's digit key elsewhere) go on as from the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Input

from specdec_tui.ui.textual_compat import watch_frames
from specdec_tui.ui.widgets.flag_form import FlagForm, widget_id
from specdec_tui.ui.widgets.flag_input import FlagInput
from specdec_tui.ui.widgets.input_stand_in import InputStandIn

from .test_ui_config_typing import STEPS, burst, field, paste, settle, unit_flags
from .test_ui_select_stand_in import ALGORITHM, on_form_frame, row_cells
from .ui_helpers import offline_app, started

TOPK = "speculative-eagle-topk"


class OneField(App[None]):
    CSS = "Screen > * { width: 1fr; height: 1; }"
    AUTO_FOCUS = None

    def __init__(self, *, real: bool, value: str, theme: str) -> None:
        super().__init__(ansi_color=theme == "ansi")
        self.real, self.value = real, value
        self.theme = "textual-dark" if theme == "ansi" else theme

    def compose(self) -> ComposeResult:
        if self.real:
            yield FlagInput("x", value=self.value, placeholder="(default)", compact=True, id="field")
        else:
            yield InputStandIn("x", value=self.value, placeholder="(default)", id="field")


async def drawn(*, real: bool, value: str, theme: str) -> list[tuple[str, str]]:
    app = OneField(real=real, value=value, theme=theme)
    async with app.run_test(size=(20, 2)) as pilot:
        await pilot.pause()
        return row_cells(app, 0, 0, 20)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "ansi"])  # ansi: the terminal's colours (ansi_color)
@pytest.mark.parametrize("value", ["", "3", "Qwen/Qwen3-8B-a-model-path-longer-than-the-field"])
async def test_the_stand_in_is_drawn_as_the_compact_field_without_the_focus(value: str, theme: str) -> None:
    field_cells = await drawn(real=True, value=value, theme=theme)
    assert "".join(char for char, _ in field_cells).strip()  # the value or the placeholder
    assert await drawn(real=False, value=value, theme=theme) == field_cells


@pytest.fixture
def typed_through_stand_ins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The keys a stand-in took for its field. The form's own swap after its first frame is held back until a key
    reaches a stand-in (else, on a fast machine, the real fields may be there before the keys are read, and the
    stand-in's way would not be walked): from then on everything runs as it does."""
    seen: list[str] = []
    given, in_place = FlagForm.on_input_stand_in_typed, FlagForm._fields_in_place

    async def counted(form: FlagForm, event: InputStandIn.Typed) -> None:
        seen.append(getattr(event.event, "key", "paste"))
        await given(form, event)

    async def held(form: FlagForm) -> None:
        if seen:
            await in_place(form)

    monkeypatch.setattr(FlagForm, "on_input_stand_in_typed", counted)
    monkeypatch.setattr(FlagForm, "_fields_in_place", held)
    yield seen


async def test_the_fields_of_the_form_s_first_frame_are_stand_ins_and_the_real_ones_look_the_same() -> None:
    app = offline_app()
    first = on_form_frame(app, lambda _: None)
    rows: dict[str, list[tuple[str, str]]] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert first
        app.screen.set_focus(None)
        await pilot.pause()
        form = app.screen.query_one(FlagForm)
        assert not form.query(InputStandIn)
        for flag in (STEPS, TOPK, "mem-fraction-static", "max-running-requests"):
            real = form.query_one(f"#{widget_id('field', flag)}", Input)
            rows[flag] = row_cells(app, real.region.y, real.region.x, real.region.width)
    seen: dict[str, list[tuple[str, str]]] = {}
    app = offline_app()

    def look(screen: Screen[Any], dropped: bool) -> None:
        if seen or dropped or not any(pane.display for pane in screen.query("#config-pane")):
            return
        for stand_in in screen.query(InputStandIn):
            region = stand_in.region
            seen[stand_in.flag] = row_cells(app, region.y, region.x, region.width)

    watch_frames(app, look)  # the form's first frame
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
    assert {flag: seen.get(flag) for flag in rows} == rows


async def test_tab_and_keys_typed_on_the_form_s_first_frame_reach_the_field_through_its_stand_in(
        typed_through_stand_ins: list[str]) -> None:
    app = offline_app()
    first = on_form_frame(app, lambda app: burst(app, "tab", "end", "backspace", "4", "backspace", "6", "tab", "5"))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert first
        steps, topk = field(app, STEPS), field(app, TOPK)
        await settle(pilot, app, lambda: (steps.value, topk.value, unit_flags(app).get(STEPS), unit_flags(app).get(TOPK))
                     == ("6", "5", "6", "5"), "steps 6, top-k 5 (a Tab selects the field's text: 5 replaces it)")
        assert app.focused is topk and unit_flags(app).get(ALGORITHM) == "NEXTN"
    assert typed_through_stand_ins == ["end"], "the first key after the Tab was taken by the steps stand-in"


async def test_a_paste_on_the_form_s_first_frame_lands_in_the_field_the_tab_reached(
        typed_through_stand_ins: list[str]) -> None:
    app = offline_app()

    def tab_and_paste(app: object) -> None:
        burst(app, "tab")  # type: ignore[arg-type]
        paste(app, "--speculative-num-steps 2")  # type: ignore[arg-type]

    on_form_frame(app, tab_and_paste)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = field(app, STEPS)
        await settle(pilot, app, lambda: steps.value == "2" and unit_flags(app).get(STEPS) == "2", "steps 2")
    assert typed_through_stand_ins == ["paste"]
