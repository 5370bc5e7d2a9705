"""The first frame draws only the Config tab; the other tabs' content is mounted right after it (issue 16, cold
start). What a user does or a host says in between must come out as if every tab had been there from the start."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
import textual.css.stylesheet as stylesheet_module
from textual import events
from textual.message import Message
from textual.screen import Screen
from textual.widgets import TabbedContent, Tabs

from specdec_tui.core.session import Trial
from specdec_tui.hosts.base import JournalRecord, ServiceStatus
from specdec_tui.loop.health import HealthSnapshot, HealthState
from specdec_tui.ui import messages as m
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.main_screen import MainScreen
from specdec_tui.ui.textual_compat import watch_frames
from specdec_tui.ui.widgets.stable_footer import StableFooter
from specdec_tui.ui.widgets.unit_preview import UnitPreview

from .ui_helpers import (
    OFFLINE_UNIT,
    demo_app,
    demo_ready,
    footer_text,
    offline_app,
    record_notifications,
    started,
    wait_for,
)

# upstream: python/sglang/srt/entrypoints/http_server.py (the line SGLang logs once it serves)
READY_LINE = "[2026-03-01 09:00:43] The server is fired up and ready to roll!"


async def test_a_tab_key_pressed_at_start_shows_that_tab_filled_and_focused_and_types_nothing() -> None:
    app = offline_app()
    app.post_message(events.Key("5", "5"))  # typed before the app runs, as the driver delivers it: before the first frame
    async with app.run_test(size=(120, 40)) as pilot:
        tabs = app.main.query_one(TabbedContent)
        await wait_for(pilot, lambda: tabs.active == "trials" and app.focused is not None and app.focused.id == "trials-data",
                       "the Trials tab shown with its table focused")
        assert app.main.trials_list.trial_ids == [1]
        assert not app.config_pane.dirty  # the digit switched tabs; it did not land in a flag field


async def test_what_the_host_says_before_the_later_tabs_exist_is_shown_not_dropped() -> None:
    app = offline_app()
    status = ServiceStatus(unit="sglang-demo.service", active_state="active", sub_state="running")
    # queued before the app runs: handled before the main screen's first frame, so before its later tabs exist
    app.post_message(m.HealthChanged(HealthSnapshot(state=HealthState.READY, status=status, http_ok=True, model="qwen")))
    app.post_message(m.JournalBatch([JournalRecord(cursor="1", timestamp=datetime(2026, 3, 1, 9, 0, 43), message=READY_LINE)]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.main.tabs_mounted, "every tab mounted")
        await pilot.pause()
        assert {view.state for view in app.main.health_views} == {"ready"}  # the Health tab and both side copies
        assert any("fired up and ready to roll" in line for line in app.main.journal_pane.shown_lines)


# -- the first frame: the unit as text, the form right after it (issue 16: cold start ≤ 1.3× a minimal app) -------

def record_frames(app: SpecdecApp) -> list[tuple[bool, str]]:
    """For every frame the app writes (a display with no batch holding it back): whether the Config pane was there,
    and the unit preview's text. A test app is headless and writes nothing, but it still hands every frame to
    display, which drops it while a batch is open: that is what a terminal would (not) see (`textual_compat`)."""
    frames: list[tuple[bool, str]] = []

    def recorded(screen: Screen[object], dropped: bool) -> None:
        if not dropped and isinstance(screen, MainScreen):
            previews = screen.query(UnitPreview)
            frames.append((bool(screen.query("#config-pane")), str(previews.first().visual) if previews else ""))

    watch_frames(app, recorded)
    return frames


def keys_before_the_form(app: SpecdecApp, *keys: str) -> None:
    """Queue `keys` before the app runs, as the driver delivers keys typed at once (here: before the form exists;
    `form_state_hook` tells whether it did)."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


def form_state_hook(app: SpecdecApp, seen: list[bool]) -> Callable[[Message], None]:
    """Appends to `seen`, per key as the app takes it, whether the form was there yet.

    ANSWERED_AFTER_FORM: the form is built in the main screen's own message loop from the moment its first frame is
    written (no frames of the unchanged preview first, issue 34), so a key typed before the form exists is answered
    once the form is there — and the screen is never taken apart (the app closing) while the form's fields mount."""

    def hook(message: Message) -> None:
        if isinstance(message, events.Key) and app.main_or_none is not None:
            seen.append(app.main.form_mounted)
    return hook


async def test_the_first_frame_shows_the_unit_as_text_and_the_form_comes_in_a_later_frame() -> None:
    app = offline_app()
    frames = record_frames(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.pause()
    assert frames, "no frame was written"
    form_there, preview = frames[0]
    assert not form_there and "ExecStart=/usr/bin/python3" in preview and "--speculative-num-steps" in preview
    assert any(form for form, _ in frames), "the form never reached the screen"


async def test_the_form_is_built_as_the_first_frame_is_written_and_no_frame_of_the_preview_comes_between() -> None:
    """The form's build starts at the first frame (the screen's first layout written with no batch open), not after
    a forced repaint of the unchanged preview: three more frames of the preview came between, each a whole-screen
    layout or paint (~130 M instructions on the demo) before the form could start (issue 34's form-ready frame)."""
    app = offline_app()
    frames = record_frames(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.pause()
    shown = [form for form, _ in frames]
    assert shown[:2] == [False, True], f"frames before the form: {shown.index(True) if True in shown else shown}"


async def test_the_first_flag_field_gets_the_focus_when_the_form_arrives() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.focused is not None and app.focused.id == "field-speculative-algorithm"
        assert not app.main.query(UnitPreview)  # replaced by the form


async def test_q_typed_before_the_form_exists_quits_without_a_traceback() -> None:
    app = offline_app()
    seen: list[bool] = []
    keys_before_the_form(app, "q")
    async with app.run_test(size=(120, 40), message_hook=form_state_hook(app, seen)) as pilot:
        await wait_for(pilot, lambda: app.return_code is not None, "the app to quit")
    assert seen and all(seen)  # typed before the form existed, answered once it is there (ANSWERED_AFTER_FORM)
    assert app.return_code == 0


async def test_f_typed_before_the_form_exists_applies_the_fix_to_the_form() -> None:
    unit = OFFLINE_UNIT.replace("--port 30000", "--port 30000 \\\n    --cuda-graph-max-bs 64")
    app = offline_app(trials=[Trial(id=1, unit_text=unit, label="old flag")])
    notes = record_notifications(app)
    seen: list[bool] = []
    keys_before_the_form(app, "f")
    async with app.run_test(size=(120, 40), message_hook=form_state_hook(app, seen)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any(n.startswith("Applied fix") for n in notes), "the fix")
        assert "--cuda-graph-max-bs-decode 64" in app.config_pane.text and "--cuda-graph-max-bs 64" not in app.config_pane.text
    assert seen and all(seen)  # ANSWERED_AFTER_FORM


async def test_p_typed_before_the_form_and_the_unit_exist_says_so(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    notes = record_notifications(app)
    seen: list[bool] = []
    keys_before_the_form(app, "p")
    async with app.run_test(size=(120, 40), message_hook=form_state_hook(app, seen)) as pilot:
        await started(pilot)
        # answered once the form is there (ANSWERED_AFTER_FORM): the host's unit may be read by then or not — the
        # answer says which, in words, either way (a CI run had the unit read first)
        await wait_for(pilot, lambda: any(n.startswith(("Not pushed: the unit is still being read",
                                                         "Nothing to push: the edit matches the unit on the host"))
                                          for n in notes), "the answer to p")
        await demo_ready(pilot, notes)  # not closed while the form takes the unit (Textual's Select raced it: CI)
    assert seen and all(seen)  # ANSWERED_AFTER_FORM


async def test_a_tab_key_before_the_form_keeps_the_focus_in_that_tab_when_the_form_arrives() -> None:
    app = offline_app()
    seen: list[bool] = []
    keys_before_the_form(app, "5")
    async with app.run_test(size=(120, 40), message_hook=form_state_hook(app, seen)) as pilot:
        await started(pilot)
        await pilot.pause()
        tabs = app.main.query_one(TabbedContent)
        assert tabs.active == "trials" and app.focused is not None and app.focused.id == "trials-data"
    assert seen and all(seen)  # ANSWERED_AFTER_FORM


# -- a rebuild of the flag rows (a unit with other flags) while the user moves on -----------------------------------

async def test_a_tab_key_during_a_rebuild_of_the_form_is_not_undone_by_the_refocus() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        assert app.focused is not None and app.focused.id == "field-speculative-algorithm"
        rebuild = asyncio.create_task(pane.load_running(OFFLINE_UNIT.replace("--port 30000", "--port 30000 --chunked-prefill-size 4096")))
        await asyncio.sleep(0)  # the rebuild has begun (its rows are going)
        app.main.action_show_tab("trials")
        await rebuild
        await pilot.pause()
        tabs = app.main.query_one(TabbedContent)
        assert tabs.active == "trials"
        assert app.focused is not None and app.focused.id == "trials-data"


async def test_escape_during_a_rebuild_of_the_form_leaves_the_field_for_good() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        pane = app.config_pane
        rebuild = asyncio.create_task(pane.load_running(OFFLINE_UNIT.replace("--port 30000", "--port 30000 --chunked-prefill-size 4096")))
        await asyncio.sleep(0)  # the rebuild has begun (the field the focus was on is going)
        app.action_cancel()  # escape
        await rebuild
        await pilot.pause()
        assert isinstance(app.focused, Tabs)  # S, v, ... are keys again, not letters in a field


async def test_the_first_frame_is_painted_once_and_shows_the_footers_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pushed from on_mount, inside Textual's start batch, the main screen was laid out and painted into a frame the
    batch drops, then painted again; the footer composed no key until the screen's first bindings update, so the
    screen was laid out once more and every key mounted over again before the frame that shows them."""
    app = offline_app()
    dropped: list[int] = []
    written: list[int] = []

    def recorded(screen: Screen[object], held: bool) -> None:
        if isinstance(screen, MainScreen):
            (dropped if held else written).append(len(screen.query("FooterKey")))

    watch_frames(app, recorded)
    rebuilt: list[StableFooter] = []
    recompose = StableFooter.recompose

    async def counted(self: StableFooter) -> None:
        rebuilt.append(self)
        await recompose(self)

    monkeypatch.setattr(StableFooter, "recompose", counted)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert "palette" in footer_text(app)
    assert dropped == []
    assert written and written[0] > 0  # the keys are on the first frame written
    assert rebuilt == []  # focus moved (tab bar, then the first flag field): the keys shown stayed the same


async def test_each_footer_key_is_styled_once_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compact footer's keys got their `-compact` class from their watcher on mount, a restyle of each key and its
    two component styles right after it had been styled (~18 M instructions of a demo start)."""
    styled: Counter[int] = Counter()
    apply = stylesheet_module.Stylesheet.apply

    def counted(self: stylesheet_module.Stylesheet, node: object, *args: object, **kwargs: object) -> None:
        if type(node).__name__ == "FooterKey":
            styled[id(node)] += 1
        apply(self, node, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stylesheet_module.Stylesheet, "apply", counted)
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        keys = list(app.main.query("FooterKey"))
        assert len(keys) > 3 and all(key.has_class("-compact") for key in keys)
        assert [styled[id(key)] for key in keys] == [1] * len(keys)


# -- the theme: known before the first stylesheet parse, not switched after the screen is built ----------------------

async def test_the_configured_theme_is_in_place_before_the_screens_stylesheets_are_parsed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A theme set on mount made Textual parse every stylesheet again after the main screen was registered (~25 ms
    of a ~600 ms start on 2 cores): MainScreen's CSS was parsed three times, the app's stylesheet file three."""
    parsed: Counter[str] = Counter()
    parse = stylesheet_module.parse

    def counted(scope: str, css: str, read_from: tuple[str, str], *args: object, **kwargs: object) -> object:
        parsed[Path(read_from[0]).name if read_from[0].endswith(".tcss") else read_from[1]] += 1
        return parse(scope, css, read_from, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stylesheet_module, "parse", counted)
    app = offline_app(theme="specdec-light")
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.theme == "specdec-light" and app.current_theme.dark is False
    assert parsed["MainScreen.DEFAULT_CSS"] == 1
    # once: Textual's theme watcher also queued a refresh that parsed every stylesheet again (SpecdecApp.refresh_css)
    assert parsed["app.tcss"] == 1


async def test_the_start_restyles_no_whole_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each widget is styled when it is mounted; the start restyled all of them again on the main screen's first
    resume, and at 140+ columns once more for the wide layout's class (~10 ms of the first frame on 2 cores). Only
    a widget whose own state changes (the focused tab bar) is restyled again. (The refresh the theme queued is
    covered by the parse count above: it runs before the main screen is pushed, and re-parsed every stylesheet.)"""
    whole: list[str] = []
    update_nodes = stylesheet_module.Stylesheet.update_nodes

    def counted(self: stylesheet_module.Stylesheet, nodes: object, animate: bool = False) -> None:
        listed = list(nodes)  # type: ignore[call-overload]
        if len(listed) > 1 and any(isinstance(node, MainScreen) for node in listed):  # the screen and what is on it
            whole.append(type(listed[0]).__name__)
        update_nodes(self, listed, animate)

    monkeypatch.setattr(stylesheet_module.Stylesheet, "update_nodes", counted)
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.main.has_class("-wide")
    assert whole == []


async def test_a_theme_picked_after_the_start_recolours_the_screen_and_a_dialog_closed_after_one_too() -> None:
    """The other side of skipping that refresh: a later theme change is applied (Textual queues the same refresh for
    it), also to the main screen while a dialog covers it."""
    app = offline_app(theme="specdec-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.screen.styles.background.hex.upper() == "#" + app.get_theme("specdec-dark").background.lstrip("#").upper()
        app.theme = "specdec-light"
        await pilot.pause()
        assert app.main.styles.background.hex.upper() == "#F6F7F9"
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.main, "the help screen")
        app.theme = "specdec-dark"
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main, "the main screen again")
        dark = app.get_theme("specdec-dark").background.upper()
        assert app.main.styles.background.hex.upper() == dark
        assert app.main.query_one(Tabs).styles.background.hex.upper() != "#F6F7F9"


async def test_a_theme_the_panel_does_not_know_falls_back_and_says_so() -> None:
    app = offline_app(theme="no-such-theme")
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.theme == "textual-dark"
    assert any("'no-such-theme' is not available" in text for text in seen)


# -- the trial loop and the host link: after the demo's first frame, at once when a key needs them -----------------

async def test_the_demo_draws_its_first_frame_before_it_builds_the_trial_loop_and_keys_show_the_host(
        tmp_path: Path) -> None:
    """The loop, the link and their records (~50 ms of a demo start on 2 cores) are built after the first frame,
    whose footer still offers the host's keys."""
    app = demo_app(tmp_path)
    frames = record_frames(app)
    built_after: list[int] = []
    build = app._link_host

    def counted() -> None:
        built_after.append(len(frames))
        build()

    app._link_host = counted  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.health is not None, "the host's health")
        assert "p Push" in footer_text(app) and "b Bench" in footer_text(app)
    assert built_after and built_after[0] >= 1, f"the loop was built before the first frame ({built_after})"


async def test_a_host_key_typed_before_the_loop_is_built_acts_on_the_host(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    keys_before_the_form(app, "p")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: bool(seen), "p's answer")
    assert not any("offline" in text for text in seen), seen
    assert any(text.startswith(("Not pushed", "Nothing to push")) for text in seen), seen


async def test_the_starts_repeated_size_lays_the_screen_out_no_more_before_the_form_and_a_real_resize_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal's size reaches the screen twice more after the first frame (the app's first Resize and the
    driver's): each laid out and painted the whole screen again, frames of nothing new before the form could start.
    A new size is still followed at start, and once the form is there the same size repaints as Textual does (a
    resume after ctrl+z sends it, to repaint the terminal)."""
    app = offline_app()
    after_first_frame = MainScreen._after_first_frame

    async def held(self: MainScreen) -> None:
        """The form waits until the test lets it come."""

    monkeypatch.setattr(MainScreen, "_after_first_frame", held)
    layouts: list[Screen[object]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.main_or_none is not None and app.main.is_current, "the main screen")
        main = app.main
        main.screen_layout_refresh_signal.subscribe(app, layouts.append)
        await pilot.pause()
        layouts.clear()
        await pilot.resize_terminal(120, 40)  # the size it has: as the driver's Resize at start
        await pilot.pause()
        assert layouts == [] and not main.form_mounted
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        assert layouts and main.size.width == 100  # a real resize at start is laid out
        main.call_later(after_first_frame, main)
        await started(pilot)
        layouts.clear()
        await pilot.resize_terminal(100, 40)
        await pilot.pause()
        assert layouts  # after the start, Textual's own handling


@pytest.mark.parametrize("moment", ["the pane's compose", "its first field built", "the pane's mount"])
async def test_the_app_closed_right_as_the_form_is_built_quits_without_a_traceback(
        moment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form starts as the first frame is written and is built while keys are answered, so a quit (q, a signal,
    the pilot's end) can come in the middle of its build: closed while its fields mounted, Textual's own Select looked
    for its parts already removed (NoMatches: a traceback instead of a quit). The exit now waits for the build."""
    from specdec_tui.ui.widgets.config_pane import ConfigPane
    from specdec_tui.ui.widgets.flag_form import FlagForm

    app = offline_app()
    asked: list[str] = []

    def close_now() -> None:
        if not asked:
            asked.append(moment)
            app.exit()

    def wrap(owner: type, name: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)  # Textual reads a handler's parameters through it
        def closing(*args: object, **kwargs: object) -> object:
            close_now()
            return original(*args, **kwargs)
        monkeypatch.setattr(owner, name, closing)

    wrap(*{"the pane's compose": (ConfigPane, "compose"), "its first field built": (FlagForm, "_field"),
           "the pane's mount": (ConfigPane, "on_mount")}[moment])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.return_code is not None, "the app to quit")
    assert asked == [moment] and app.return_code == 0


async def test_the_form_ready_frame_builds_each_flag_row_as_the_forms_own_children_no_container_per_row() -> None:
    """Each flag row is its name, its field and its findings line, children of the form itself (one grid): with a
    Horizontal per row, Textual styled every name and field from scratch (its style cache is keyed by the parent),
    ~45 M instructions a row on the form-ready frame (issue 34). The rows still read as rows: a name, its field on
    the same line to its right, the findings under both."""
    from textual.containers import Horizontal

    from specdec_tui.ui.widgets.flag_form import FORM_FLAGS, FlagForm, widget_id

    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await app.config_pane.set_flag("speculative-num-steps", "three")
        await pilot.pause()
        form = app.main.query_one(FlagForm)
        assert not [child for child in form.children if isinstance(child, Horizontal)]
        for name in FORM_FLAGS:
            field = form.query_one(f"#{widget_id('field', name)}")
            assert field.parent is form
            label = form.children[form.children.index(field) - 1]
            assert label.region.y == field.region.y and label.region.right <= field.region.x
        steps = form.query_one(f"#{widget_id('field', 'speculative-num-steps')}")
        issue = form.query_one(f"#{widget_id('issue', 'speculative-num-steps')}")
        topk = form.query_one(f"#{widget_id('field', 'speculative-eagle-topk')}")
        assert issue.region.y == steps.region.bottom and issue.region.x == form.content_region.x
        assert issue.region.width == form.content_region.width and issue.region.height >= 1
        assert topk.region.y == issue.region.bottom  # the next row right under the findings (the states snapshot
        # "invalid" holds their height: measured at one column's width, a 3-line finding took 5 rows)


async def test_findings_of_the_unit_at_start_show_under_their_row_though_the_lines_come_after_the_form_frame() -> None:
    """The rows' finding lines are built a frame after the form's first frame (that frame shows no finding: they come
    a frame later in any case; building 8-14 hidden lines was ~1 % of the start, issue 34). Findings worked out
    before the lines are there are shown once they are: under their row, in words."""
    from specdec_tui.ui.widgets.flag_form import FlagForm, widget_id

    unit = OFFLINE_UNIT.replace("--speculative-num-steps 1", "--speculative-num-steps three")
    assert unit != OFFLINE_UNIT
    app = offline_app(trials=[Trial(id=1, unit_text=unit, label="bad steps")])
    lines_on_form_frame: list[int] = []

    def recorded(screen: Screen[object], dropped: bool) -> None:
        if not dropped and isinstance(screen, MainScreen) and screen.query("#config-pane") and not lines_on_form_frame:
            lines_on_form_frame.append(len(screen.query(".flag-issue")))

    watch_frames(app, recorded)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        form = app.main.query_one(FlagForm)
        line_id = f"#{widget_id('issue', 'speculative-num-steps')}"
        await wait_for(pilot, lambda: bool(form.query(line_id)) and form.query_one(line_id).display, "the finding line")
        await pilot.pause()
        line, field = form.query_one(line_id), form.query_one(f"#{widget_id('field', 'speculative-num-steps')}")
        assert "✗" in str(line.render()) and line.region.y == field.region.bottom and line.region.height >= 1
        assert len(form.query(".flag-issue")) == len(form.query("Input, Select"))  # one line under every row
    assert lines_on_form_frame == [0]
