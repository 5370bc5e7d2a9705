"""The Config pane: form and unit text stay in step, validation shows inline, the diff follows."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from specdec_tui.core.sglang_schema.schema import parse_schema
from specdec_tui.loop.states import Busy
from specdec_tui.ui.screens.help_screen import HelpScreen
from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import offline_app, started, wait_for


async def test_editing_steps_field_changes_unit_text_and_diff() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
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
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        # a value 0.5.23's parser refuses (the hand table's "topk 0 is out of range" was the panel's own rule)
        editor.text = editor.text.replace("--speculative-eagle-topk 1", "--speculative-eagle-topk one")
        await pilot.pause()
        topk = app.screen.query_one(f"#{widget_id('field', 'speculative-eagle-topk')}", Input)
        assert topk.value == "one"
        inline = app.screen.query_one(f"#{widget_id('issue', 'speculative-eagle-topk')}")
        assert inline.has_class("-shown") and inline.has_class("-error")
        assert "argument --speculative-eagle-topk: invalid int value: 'one'" in str(inline.render())
        assert app.config_pane.errors


async def test_apply_fix_rewrites_the_flag() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--speculative-num-draft-tokens 2", "--speculative-num-draft-tokens 6")
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
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--tp 4 \\", "--tp 4 \\\n    --chunked-prefill-size 4096 \\")
        row_id = f"#{widget_id('field', 'chunked-prefill-size')}"
        # the row comes with the form's rebuild, which the editor's change starts: more than one pause on a loaded
        # machine (Textual's pause waits for the messages queued before it, and takes a starved process for idle)
        await wait_for(pilot, lambda: any(row.is_mounted for row in app.screen.query(row_id)), "the new flag's row")
        row = app.screen.query_one(row_id, Input)
        assert row.value == "4096"
        row.focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "backspace", *"8192")
        await wait_for(pilot, lambda: "--chunked-prefill-size 8192" in editor.text, "the edit in the unit's text")


async def test_api_key_is_masked_on_screen_and_a_push_after_an_edit_sends_the_real_key(tmp_path, monkeypatch) -> None:
    import dataclasses

    from specdec_tui.core.unit import UnitFile
    from specdec_tui.hosts.local.workspace import ensure_demo_workspace

    from .ui_helpers import demo_app, record_notifications, wait_for

    secret = "s3cret"
    ws = ensure_demo_workspace(tmp_path / "demo", time_scale=200.0)
    unit_file = ws.root / "units" / ws.unit_name
    unit_file.write_text(UnitFile.parse(unit_file.read_text()).set_flags({"api-key": secret}).text)
    monkeypatch.setenv("SPECDEC_UI_TEST_KEY", secret)  # the panel's own requests carry the key
    app = demo_app(tmp_path)
    app.config.hosts["demo"] = dataclasses.replace(app.config.hosts["demo"], api_key_env="SPECDEC_UI_TEST_KEY")
    seen = record_notifications(app)

    def screen_text() -> str:
        return app.export_screenshot()

    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.config_pane.running_text != "", "the unit to load")
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo start", steps=1200)
        pane = app.config_pane
        editor = app.screen.query_one(UnitEditor)
        assert "--api-key <redacted>" in editor.text and secret not in editor.text
        assert app.screen.query_one(f"#{widget_id('field', 'api-key')}", Input).value == "<redacted>"
        assert secret not in screen_text()
        steps = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
        steps.focus()
        await pilot.press("end", "backspace", "2")
        await pilot.pause()
        assert "--api-key <redacted>" in editor.text  # editing another flag keeps it masked
        assert "+    --speculative-num-steps 2" in pane.diff and secret not in pane.diff
        assert secret in pane.text  # ...and the edit itself still holds the real key
        assert secret not in screen_text()
        app.main.action_show_tab("config")
        await pilot.press("escape")
        await pilot.press("p")
        await wait_for(pilot, lambda: "--speculative-num-steps 2" in unit_file.read_text(), "the push")
        flags = UnitFile.parse(unit_file.read_text()).flags()
        assert flags["api-key"] == secret and flags["speculative-num-steps"] == "2"
        await pilot.pause(0.2)
        assert secret not in screen_text()
        assert not [n for n in seen if secret in n]


async def test_typing_in_the_editor_keeps_the_key_masked_and_real_underneath() -> None:
    from specdec_tui.core.unit import UnitFile

    from .ui_helpers import OFFLINE_UNIT

    keyed = UnitFile.parse(OFFLINE_UNIT).set_flags({"api-key": "s3cret"}).text
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        await pane.load_running(keyed)
        editor = app.screen.query_one(UnitEditor)
        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.press("#", "space", "x", "enter")
        await pilot.pause()
        assert editor.text.startswith("# x\n[Unit]") and "--api-key <redacted>" in editor.text
        assert pane.text == "# x\n" + keyed  # the edit pushed carries the real key
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await pilot.pause()
        assert not pane.dirty and pane.text == keyed


async def test_offline_start_loads_the_unit_once_and_an_edit_made_at_once_stays() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        reloads: list[str] = []
        original = pane.load_running

        async def counting(text: str, **kwargs) -> None:
            reloads.append(text)
            await original(text, **kwargs)

        pane.load_running = counting  # type: ignore[method-assign]
        await pane.set_flag("speculative-num-steps", "5")  # before the first refresh's callbacks ran
        for _ in range(5):
            await pilot.pause()
        assert reloads == []  # the main screen was built with the unit; nothing loads it again
        assert "--speculative-num-steps 5" in pane.text and pane.dirty


async def test_editor_says_keys_are_text_while_focused_and_escape_goes_back_to_the_form() -> None:
    from specdec_tui.ui.widgets.flag_form import FlagForm

    from .ui_helpers import record_notifications

    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        assert editor.border_title == "unit file"
        editor.focus()
        editor.move_cursor((0, 0))
        await pilot.pause()
        assert editor.border_title == "editing — esc to leave"
        import html

        assert "editing — esc to leave" in html.unescape(app.export_screenshot()).replace("\xa0", " ")
        await pilot.press("p")  # text here, not "push"
        assert editor.text.startswith("p[Unit]")
        assert not [n for n in seen if "offline session" in n]
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is not None and app.screen.query_one(FlagForm) in app.focused.ancestors
        assert editor.border_title == "unit file"
        await pilot.press("p", "question_mark")  # commands again (push is not offered offline; ? opens the help)
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert not editor.text.startswith("pp")


async def test_values_shown_while_the_form_is_still_being_mounted_wait_for_its_fields() -> None:
    """A unit read from the host while the flag form was still mounting set a Select's value before the Select had
    composed its parts: `NoMatches: '#label'` stopped the panel (seen once in CI; here at every point of the mount)."""
    import asyncio

    from textual.app import App, ComposeResult
    from textual.containers import Vertical
    from textual.widgets import Select

    from specdec_tui.ui.widgets.flag_form import FlagForm

    class Box(App[None]):
        def compose(self) -> ComposeResult:
            yield Vertical(id="box")

    shown = {"speculative-algorithm": "EAGLE", "speculative-num-steps": "2", "port": "30001"}
    for turns in range(12):  # the mount's points, from "registered" to "every row composed"
        app = Box()
        async with app.run_test() as pilot:
            form = FlagForm({"speculative-algorithm": "NEXTN", "speculative-num-steps": "3"})
            app.query_one("#box").mount(form)
            for _ in range(turns):
                await asyncio.sleep(0)
            await form.show_values(shown)
            await pilot.pause()
            algorithm = form.query_one(f"#{widget_id('field', 'speculative-algorithm')}", Select)
            assert algorithm.value == "EAGLE", turns
            steps = form.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
            assert steps.value == "2", turns
        assert app.return_code in (None, 0), turns


async def test_the_form_judges_by_the_hosts_release_once_it_is_learned(tmp_path: Path) -> None:
    from specdec_tui.core.sglang_schema.host_probe import schema_source
    from tests.test_sglang_release import STANDIN, FakeHost

    newer = parse_schema((await FakeHost(STANDIN).run_python("python3", schema_source())).stdout)
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--enable-metrics", "--enable-metrics \\\n    --cuda-graph-max-bs 8")
        await wait_for(pilot, lambda: any("ambiguous option: --cuda-graph-max-bs" in e.message
                                          for e in app.config_pane.errors), "0.5.23's refusal")
        await app.config_pane.use_release(newer)  # the host runs a release that still has the flag
        assert not any(i.flag == "cuda-graph-max-bs" for i in app.config_pane.issues)


async def test_values_shown_in_the_form_walk_it_once_not_once_per_field() -> None:
    """Issue 34: each field's value was set after a query of its own, a walk of the whole form per field: ~50 ms of
    the panel's loop on every unit a sweep pushed, while keys waited."""
    from textual.app import App, ComposeResult

    from specdec_tui.ui.widgets.flag_form import FlagForm

    flags: dict[str, str | None] = {"speculative-algorithm": "NEXTN", "speculative-num-steps": "3",
                                    "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4",
                                    "mem-fraction-static": "0.85", "port": "30000", "tp": "4"}

    class Box(App[None]):
        def compose(self) -> ComposeResult:
            yield FlagForm(flags)

    app = Box()
    async with app.run_test() as pilot:
        await pilot.pause()
        form = app.query_one(FlagForm)
        queries: list[str] = []
        query = form.query

        def counted(selector: str | None = None) -> object:
            queries.append(str(selector))
            return query(selector)

        form.query = counted  # type: ignore[assignment,method-assign]
        await form.show_values({**flags, "speculative-num-steps": "5", "port": "30001"})  # the same rows, new values
        await pilot.pause()
        assert len(queries) == 1, queries
        assert form.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input).value == "5"
        assert form.query_one(f"#{widget_id('field', 'port')}", Input).value == "30001"
