"""The Config pane: form and unit text stay in step, validation shows inline, the diff follows."""

from __future__ import annotations

from textual.widgets import Input

from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import offline_app


async def test_editing_steps_field_changes_unit_text_and_diff() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.config_pane
        assert pane.diff == ""
        field = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
        assert field.value == "1"
        field.focus()
        await pilot.press("end", "backspace", "3")
        await pilot.pause()
        editor = app.screen.query_one(UnitEditor)
        assert "--speculative-num-steps 3 \\" in editor.text
        assert "--speculative-num-steps 1" not in editor.text
        assert "-    --speculative-num-steps 1 \\" in pane.diff
        assert "+    --speculative-num-steps 3 \\" in pane.diff
        assert pane.dirty


async def test_editing_unit_text_updates_form_and_inline_error() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--speculative-eagle-topk 1", "--speculative-eagle-topk 0")
        await pilot.pause()
        topk = app.screen.query_one(f"#{widget_id('field', 'speculative-eagle-topk')}", Input)
        assert topk.value == "0"
        inline = app.screen.query_one(f"#{widget_id('issue', 'speculative-eagle-topk')}")
        assert inline.has_class("-shown") and inline.has_class("-error")
        assert "out of range" in str(inline.render())
        assert app.config_pane.errors


async def test_apply_fix_rewrites_the_flag() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--speculative-eagle-topk 1", "--speculative-eagle-topk 0")
        await pilot.pause()
        fixable = app.config_pane.first_fix()
        assert fixable is not None
        done = await app.config_pane.apply_fix()
        await pilot.pause()
        assert done and done.startswith("Applied fix")
        for name, value in fixable.fix.items():
            assert f"--{name} {value}" in editor.text


async def test_unknown_flag_gets_its_own_row() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--tp 4 \\", "--tp 4 \\\n    --chunked-prefill-size 4096 \\")
        await pilot.pause()
        row = app.screen.query_one(f"#{widget_id('field', 'chunked-prefill-size')}", Input)
        assert row.value == "4096"
        row.focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "backspace", *"8192")
        await pilot.pause()
        assert "--chunked-prefill-size 8192" in editor.text
