"""Typing fast into the Config pane: every key lands, the end state is exactly what was typed, and
nothing changes on its own afterwards (the unit text is the one source of truth; views never write
back what they render, and a re-render never replaces what the person is typing).

The keys are posted the way the terminal driver posts a burst (one read, many keys) or a paste: all at
once, before the app handled the first. Nothing here sleeps; the tests wait for conditions."""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Select

from specdec_tui.core.unit import UnitFile
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.widgets.flag_form import FORM_FLAGS, FlagForm, widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import OFFLINE_UNIT, offline_app, record_notifications, started, wait_for

STEPS = "speculative-num-steps"


def field(app: SpecdecApp, flag: str) -> Input:
    return app.screen.query_one(f"#{widget_id('field', flag)}", Input)


def unit_flags(app: SpecdecApp) -> dict[str, str | None]:
    return UnitFile.parse(app.config_pane.text).flags()


def burst(app: SpecdecApp, *keys: str) -> None:
    """Keys as the driver posts them from one read: queued all at once, none handled yet."""
    for key in keys:
        char = key if len(key) == 1 else (" " if key == "space" else None)
        app.post_message(events.Key(key, char))


async def type_fast(pilot: Pilot, app: SpecdecApp, *keys: str) -> None:
    """Keys a person types fast: each run of characters arrives as one burst (queued before the
    app handled the first; the pane's edits are still in flight when the next run starts), editing
    keys one at a time (Textual runs an input's key bindings only once the key has bubbled up to the
    app, so within one read they would overtake the characters before them)."""
    run: list[str] = []
    for key in (*keys, None):
        if key is not None and (len(key) == 1 or key == "space"):
            run.append(key)
            continue
        burst(app, *run)
        run = []
        if key is not None:
            await pilot.press(key)


def paste(app: SpecdecApp, text: str) -> None:
    app.post_message(events.Paste(text))


async def settle(pilot: Pilot, app: SpecdecApp, condition: object, what: str) -> None:
    """Wait for `condition`, then let every queued message run and check it still holds: a value that
    flips afterwards (the form and the unit echoing each other) fails here."""
    check = condition if callable(condition) else (lambda: condition)
    await wait_for(pilot, check, what)
    for _ in range(10):
        await pilot.pause()
        assert check(), f"{what}: held, then changed on its own"


async def focus_field(pilot: Pilot, app: SpecdecApp, flag: str) -> Input:
    target = field(app, flag)
    target.focus()
    await wait_for(pilot, lambda: app.focused is target, f"focus on the {flag} field")
    return target


async def test_a_burst_of_keys_in_the_steps_field_ends_on_what_was_typed() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = await focus_field(pilot, app, STEPS)
        assert steps.value == "1"
        burst(app, "end", "backspace", "3", "backspace", "2", "backspace", "3")  # one read
        await settle(pilot, app, lambda: steps.value == "3" and unit_flags(app).get(STEPS) == "3", "steps 3")
        editor = app.screen.query_one(UnitEditor)
        assert "--speculative-num-steps 3 \\" in editor.text
        assert steps.cursor_position == 1 and app.focused is steps


async def test_keys_read_together_with_a_tab_land_in_the_field_the_tab_moved_to() -> None:
    """Tab and Shift+Tab move the focus through a binding that runs once the key has bubbled up to the App; the
    keys read with them (tmux `send-keys Tab End BSpace 4`) went to the field being left, or nowhere (seen in the
    demo: the steps field emptied, the 4 and 3 after it lost, the unit unchanged). A paste behind a Tab too."""
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        algorithm = app.screen.query_one(f"#{widget_id('field', 'speculative-algorithm')}", Select)
        algorithm.focus()
        await wait_for(pilot, lambda: app.focused is algorithm, "focus on the algorithm")
        steps, topk = field(app, STEPS), field(app, "speculative-eagle-topk")
        burst(app, "tab", "end", "backspace", "4", "backspace", "3")  # one read
        await settle(pilot, app, lambda: steps.value == "3" and unit_flags(app).get(STEPS) == "3", "steps 3")
        burst(app, "tab", "end", "backspace", "9", "shift+tab", "end", "backspace", "5", "tab")
        paste(app, "2")  # a field reached by Tab has its text selected: the paste replaces it, as in any text field

        def shown() -> tuple[str, ...]:
            flags = unit_flags(app)
            return steps.value, topk.value, str(flags.get(STEPS)), str(flags.get("speculative-eagle-topk"))

        await settle(pilot, app, lambda: shown() == ("5", "2", "5", "2"), "steps 5 and top-k 2 in the fields and the unit")
        assert app.focused is topk and algorithm.value == "NEXTN"


def click_at(app: SpecdecApp, widget: Input) -> None:
    """A mouse click on `widget` as the driver posts it (button down, then up), not waiting for anything."""
    x, y = widget.region.x + 1, widget.region.y
    for kind in (events.MouseDown, events.MouseUp):
        app.post_message(kind(None, x, y, 0, 0, 1, False, False, False, screen_x=x, screen_y=y))


async def test_a_click_right_after_keys_comes_after_them() -> None:
    """Keys typed, then a click on another field before the panel caught up: the keys land in the field they were
    typed in, the click then moves the focus (it waited behind the keys; it used to overtake them)."""
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = await focus_field(pilot, app, STEPS)
        topk = field(app, "speculative-eagle-topk")
        burst(app, "end", "backspace", "7", "backspace", "6")
        click_at(app, topk)

        def shown() -> tuple[str, ...]:
            return steps.value, topk.value, str(unit_flags(app).get(STEPS))

        await settle(pilot, app, lambda: shown() == ("6", "1", "6") and app.focused is topk, "steps 6, then the focus on top-k")


async def test_a_longer_burst_keeps_every_key_and_the_cursor() -> None:
    """Editing keys (BackSpace, Home, End) read together with characters act in typing order."""
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = await focus_field(pilot, app, STEPS)
        burst(app, "end", "backspace", *"31", "backspace", *"22", "backspace", *"4", "home", "9", "end", "5")
        await settle(pilot, app, lambda: steps.value == "93245" and unit_flags(app).get(STEPS) == "93245", "steps 93245")
        assert steps.cursor_position == 5


async def test_bursts_and_pastes_in_every_field_end_on_exactly_what_was_typed() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        form = app.screen.query_one(FlagForm)
        inputs = [f for f in form.query(Input).results(Input)]
        names = [n for n in dict.fromkeys((*FORM_FLAGS, *unit_flags(app))) if n not in ("speculative-algorithm", "enable-metrics")]
        assert {f.id for f in inputs} >= {widget_id("field", n) for n in names}
        typed: dict[str, str] = {}
        for i, name in enumerate(names):
            target = await focus_field(pilot, app, name)
            old = target.value
            value = f"{40 + i}" if i % 2 else f"x/{i}-{name[:5]}"
            if i % 3 == 0:  # a paste over the selected text
                await pilot.press("end", "shift+home")
                paste(app, value)
            else:  # typed: clear, then the value key by key
                await type_fast(pilot, app, "end", *["backspace"] * len(old), *value)
            typed[name] = value
            await settle(pilot, app, lambda n=name, v=value, t=target: unit_flags(app).get(n) == v and t.value == v, f"{name} = {value}")
        flags = unit_flags(app)
        for name, value in typed.items():
            assert flags.get(name) == value, name
            assert field(app, name).value == value, name


async def test_a_field_being_typed_in_is_not_rewritten_by_a_re_render() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = await focus_field(pilot, app, STEPS)
        await pilot.press("end", "backspace")  # the field is empty: the flag stays until enter
        await settle(pilot, app, lambda: steps.value == "", "an empty field")
        await app.config_pane.set_flag("mem-fraction-static", "0.8")  # any change re-renders the form
        await settle(pilot, app, lambda: field(app, "mem-fraction-static").value == "0.8", "the re-render")
        assert steps.value == "" and app.focused is steps
        burst(app, "7")
        await settle(pilot, app, lambda: steps.value == "7" and unit_flags(app).get(STEPS) == "7", "steps 7")


async def test_typing_a_new_flag_line_in_the_editor_keeps_every_key() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.focus()
        row = editor.text.splitlines().index("    --mem-fraction-static 0.85 \\")
        editor.move_cursor((row, 0))
        await wait_for(pilot, lambda: app.focused is editor, "focus in the editor")
        line = "    --speculative-foo 3 \\"
        keys = ["space" if c == " " else c for c in line]
        await pilot.press(*keys[:12])  # key by key: every partial line is rendered in the form
        await type_fast(pilot, app, *keys[12:], "enter")  # the rest as bursts
        expected = OFFLINE_UNIT.replace("    --mem-fraction-static", line + "\n    --mem-fraction-static")
        await settle(pilot, app, lambda: editor.text == expected and app.config_pane.text == expected, "the typed line")
        assert unit_flags(app)["speculative-foo"] == "3" and unit_flags(app)["mem-fraction-static"] == "0.85"
        assert editor.cursor_location == (row + 1, 0)
        await settle(pilot, app, lambda: field(app, "speculative-foo").value == "3", "the new flag's row")
        assert app.focused is editor


async def test_a_paste_into_the_editor_lands_once_at_the_cursor() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.focus()
        row = editor.text.splitlines().index("    --mem-fraction-static 0.85 \\")
        editor.move_cursor((row, 0))
        await wait_for(pilot, lambda: app.focused is editor, "focus in the editor")
        pasted = "    --chunked-prefill-size 4096 \\\n    --page-size 16 \\\n"
        paste(app, pasted)
        await type_fast(pilot, app, *["space" if c == " " else c for c in "    --tp-size 2 \\"], "enter")
        expected = OFFLINE_UNIT.replace("    --mem-fraction-static", pasted + "    --tp-size 2 \\\n    --mem-fraction-static")
        await settle(pilot, app, lambda: editor.text == expected and app.config_pane.text == expected, "the pasted lines")
        assert editor.cursor_location == (row + 3, 0)
        await settle(pilot, app, lambda: field(app, "page-size").value == "16", "the pasted flag's row")


async def test_typing_in_the_form_then_at_once_in_the_editor_keeps_both() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        steps = await focus_field(pilot, app, STEPS)
        editor = app.screen.query_one(UnitEditor)
        await type_fast(pilot, app, "end", "backspace", "4")
        editor.focus()  # the next keys go to the editor before the pane applied the field's edit
        editor.move_cursor((0, 0))
        await type_fast(pilot, app, "#", "space", "x", "enter")
        await settle(pilot, app, lambda: app.config_pane.text.startswith("# x\n[Unit]")
                     and unit_flags(app).get(STEPS) == "4" and editor.text == app.config_pane.text, "both edits")
        assert steps.value == "4" and editor.cursor_location == (1, 0)


async def test_the_algorithm_select_follows_the_unit_and_a_choice_edits_it() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        select = app.screen.query_one(f"#{widget_id('field', 'speculative-algorithm')}", Select)
        editor = app.screen.query_one(UnitEditor)
        editor.focus()
        edited = editor.text.replace("--speculative-algorithm NEXTN", "--speculative-algorithm EAGLE")
        editor.text = edited
        await settle(pilot, app, lambda: select.value == "EAGLE" and app.config_pane.text == edited, "the select to follow the unit")
        assert editor.text == edited  # rendering the select wrote nothing back
        select.value = "NGRAM"  # as a choice in the overlay sets it
        await settle(pilot, app, lambda: unit_flags(app).get("speculative-algorithm") == "NGRAM"
                     and editor.text == app.config_pane.text, "NGRAM in the unit")
        assert select.value == "NGRAM"


async def test_apply_fix_removes_flags_the_issue_names() -> None:
    app = offline_app()
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        await pane.set_flag("speculative-algorithm", "NGRAM")  # NGRAM ignores --speculative-eagle-topk
        await settle(pilot, app, lambda: pane.first_fix() is not None, "a fixable issue")
        issue = pane.first_fix()
        assert issue is not None and issue.remove
        done = await pane.apply_fix()
        assert done is not None and done.startswith("Applied fix") and all(f"removed --{n}" in done for n in issue.remove)
        for name in issue.remove:
            assert name not in unit_flags(app)
        assert not [n for n in seen if "Cannot" in n]
