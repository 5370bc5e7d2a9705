"""Each use of Textual's private API (`ui.textual_compat`) against the installed Textual (issue 34): a release that
renames or changes one fails here, with the use named, instead of the panel silently slowing down or breaking."""

from __future__ import annotations

import gc
import inspect
from collections.abc import Callable

import pytest
import textual
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.reactive import Reactive
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import DataTable, Footer, Input

from specdec_tui.ui import textual_compat as compat
from specdec_tui.ui.input_order import InputInOrder
from specdec_tui.ui.widgets.stable_footer import StableFooter

from .ui_helpers import cells_rendered

CHANGED = f"Textual {textual.__version__} changed a private part ui/textual_compat.py uses (checked with {compat.CHECKED_WITH}): "


class Host(App[None]):
    BINDINGS = [Binding("p", "push", "Push", id="push")]

    def compose(self) -> ComposeResult:
        yield StableFooter(compact=True)

    def action_push(self) -> None:
        pass


async def test_open_batches_counts_the_batch_that_holds_frames_back() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert compat.open_batches(app) == 0, CHANGED + "App._batch_count is not 0 outside a batch"
        with app.batch_update():
            assert compat.open_batches(app) == 1, CHANGED + "App._batch_count does not count batch_update()"
        assert hasattr(app, "_batch_count"), CHANGED + "App._batch_count is gone (ui.first_paint waits on it)"


async def test_css_updates_rise_with_a_theme_change() -> None:
    app = Host()
    async with app.run_test() as pilot:
        before = compat.css_updates(app)
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        assert compat.css_updates(app) > before, CHANGED + "App._css_update_count no longer rises with a theme change"


async def test_the_footer_shows_its_keys_from_its_first_compose() -> None:
    assert isinstance(getattr(Footer, "_bindings_ready", None), Reactive), CHANGED + "Footer._bindings_ready is gone"
    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        keys = app.screen.query(compat.footer_key_type())
        assert [str(key.description) for key in keys][:1] == ["Push"], CHANGED + "FooterKey or Footer's compose changed"


def test_screen_focused_is_a_reactive_the_panel_can_redefine() -> None:
    focused = Screen.__dict__.get("focused")
    assert isinstance(focused, Reactive), CHANGED + "Screen.focused is no longer a reactive (MainScreen redefines it)"
    assert isinstance(compat.focus_without_repaint(), Reactive)


async def test_an_input_runs_its_own_bindings_before_inserting_text() -> None:
    assert inspect.iscoroutinefunction(getattr(Input, "_on_key", None)), CHANGED + "Input._on_key is gone"
    assert callable(getattr(Input, "_restart_blink", None)), CHANGED + "Input._restart_blink is gone"
    from specdec_tui.ui.widgets.flag_input import FlagInput

    class Field(App[None]):
        def compose(self) -> ComposeResult:
            yield FlagInput("speculative-num-steps", value="", placeholder="", compact=True, id="field")

    app = Field()
    async with app.run_test() as pilot:
        field = app.query_one(FlagInput)
        field.focus()
        assert field.own_bindings("backspace"), CHANGED + "Widget._bindings.key_to_bindings no longer maps keys"
        await pilot.press("a", "b", "backspace", "c")
        assert field.value == "ac", CHANGED + "Input's key handling changed (FlagInput.key_first)"


class TwoFields(App[None]):
    """Two fields, the first focused: "a", Tab, "b" read together must end as "a" and "b"."""

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")

    def on_mount(self) -> None:
        self.query_one("#first", Input).focus()


class TwoFieldsInOrder(compat.InputInOrderApp, TwoFields):
    def __init__(self) -> None:
        super().__init__()
        self.input_order = InputInOrder(self.deliver_input, self.set_timer, self.call_later)


async def _typed_together(app: TwoFields) -> tuple[str, str]:
    """"a", Tab, "b" as the driver posts them from one read (queued before the first is handled)."""
    async with app.run_test() as pilot:
        await pilot.pause()
        for key, char in (("a", "a"), ("tab", None), ("b", "b")):
            app.post_message(events.Key(key, char))
        for _ in range(20):
            await pilot.pause()
        return app.query_one("#first", Input).value, app.query_one("#second", Input).value


async def test_textual_alone_still_lets_a_key_overtake_a_tab() -> None:
    """Why `InputInOrderApp` exists: when Textual keeps a burst in order itself, this fails and it can go."""
    assert await _typed_together(TwoFields()) != ("a", "b"), (
        f"Textual {textual.__version__} now delivers a key after a Tab to the next field by itself: "
        "textual_compat.InputInOrderApp (the App.on_event override) is no longer needed")


async def test_input_in_order_follows_textuals_routing_of_a_typed_key() -> None:
    """`App.on_event` gets driver input unforwarded and forwards a key to `focused or screen`: what
    `InputInOrderApp.deliver_input` follows. A burst across a Tab then lands in both fields."""
    seen: list[tuple[str, bool]] = []

    class Watched(TwoFieldsInOrder):
        async def deliver_input(self, event: events.Event) -> None:
            target = None
            if isinstance(event, events.Key):
                seen.append((event.key, event.is_forwarded))
                target = self.focused
            await super().deliver_input(event)
            if isinstance(event, events.Key) and event.key == "a":
                assert event.is_forwarded and target is not None and target.id == "first", (
                    CHANGED + "App.on_event no longer forwards a typed key to the focused widget")

    assert await _typed_together(Watched()) == ("a", "b"), CHANGED + "InputInOrderApp no longer keeps a burst in order"
    assert [key for key, forwarded in seen if not forwarded] == ["a", "tab", "b"], (
        CHANGED + "driver keys no longer reach App.on_event unforwarded")


async def test_frames_are_seen_as_the_app_hands_them_over() -> None:
    assert callable(getattr(App, "_display", None)), CHANGED + "App._display is gone (the tests' frame probe)"
    seen: list[bool] = []
    app = Host()
    compat.watch_frames(app, lambda screen, dropped: seen.append(dropped))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.screen.refresh()
        await pilot.pause()
    assert False in seen, CHANGED + "no frame reached App._display outside a batch"


async def test_full_renders_are_counted() -> None:
    from textual._compositor import Compositor

    assert callable(getattr(Compositor, "render_full_update", None)), CHANGED + "Compositor.render_full_update is gone"
    counts: list[int] = []
    app = Host()
    async with app.run_test() as pilot:
        with compat.full_renders_counted(counts):
            await pilot.resize_terminal(90, 30)
            await pilot.pause()
    assert counts, CHANGED + "a resize no longer renders the full screen through Compositor.render_full_update"


async def test_a_full_frame_is_the_text_a_terminal_receives() -> None:
    class Shown(App[None]):
        def compose(self) -> ComposeResult:
            yield Input(value="words on screen")

    app = Shown()
    async with app.run_test() as pilot:
        await pilot.pause()
        frame = compat.full_frame_text(app)
    assert "words on screen" in frame and "\x1b[" in frame, CHANGED + "Screen._compositor.render_update(full=True) changed"


async def test_a_frame_s_cells_are_its_characters_with_their_styles() -> None:
    class Shown(App[None]):
        def compose(self) -> ComposeResult:
            yield Input(value="words on screen")

    app = Shown()
    async with app.run_test(size=(40, 6)) as pilot:
        await pilot.pause()
        rows = compat.frame_cells(app)
    assert len(rows) == 6 and all(len(row) == 40 for row in rows), CHANGED + "render_update(full=True)'s strips changed"
    text = ["".join(char for char, _ in row) for row in rows]
    line = next(i for i, row in enumerate(text) if "words on screen" in row)
    styles = {style for char, style in rows[line] if char == "w"}
    assert styles and all(style is not None and style.color is not None for style in styles), CHANGED


def test_a_paste_with_colour_codes_is_one_paste_of_its_text() -> None:
    """`filter_paste_input` wraps `XTermParser.feed`: a coloured bracketed paste, even cut across reads, is one
    Paste event of its text, and keys around it stay keys (Textual alone sent the text after the first code as
    keys ahead of the paste)."""
    from textual._xterm_parser import XTermParser

    from specdec_tui.ui.textual_compat import filter_paste_input

    filter_paste_input()
    filter_paste_input()  # once only: a second call wraps nothing again
    parser = XTermParser()
    seen: list[object] = []
    for chunk in ("a\x1b[200~--speculative-eagle-topk \x1b[3", "1m2\x1b[0m\x1b[2", "01~b"):
        seen += list(parser.feed(chunk))
    assert [(type(e).__name__, getattr(e, "text", getattr(e, "character", None))) for e in seen] == [
        ("Key", "a"), ("Paste", "--speculative-eagle-topk 2"), ("Key", "b")]


def test_the_linux_driver_builds_its_decoder_from_its_module_s_getincrementaldecoder() -> None:
    """`lenient_terminal_input` replaces the driver module's `getincrementaldecoder`: the input thread must still
    build its decoder through that name, and the replacement must turn a byte that is not UTF-8 into U+FFFD."""
    from textual.drivers import linux_driver

    source = inspect.getsource(linux_driver.LinuxDriver.run_input_thread)
    assert 'getincrementaldecoder("utf-8")' in source, CHANGED + "LinuxDriver.run_input_thread builds its decoder otherwise"
    compat.lenient_terminal_input()
    decode = vars(linux_driver)["getincrementaldecoder"]("utf-8")().decode
    assert decode(b"\xff4", final=True) == "\ufffd4"


class Fields(App[None]):
    """A field built compact by Textual (`compact=True`) beside one also given `compact_input_classes`."""

    def __init__(self, value: str) -> None:
        super().__init__()
        self.value = value

    def compose(self) -> ComposeResult:
        yield Input(value=self.value, compact=True, id="textual")
        yield Input(value=self.value, compact=True, classes=compat.compact_input_classes(self.value), id="prestyled")


async def test_a_field_built_with_the_compact_classes_is_the_compact_field_textual_builds() -> None:
    for value in ("3", ""):
        app = Fields(value)
        async with app.run_test(size=(40, 6)) as pilot:
            await pilot.pause()
            textual_built, prestyled = app.query_one("#textual", Input), app.query_one("#prestyled", Input)
            assert prestyled.classes == textual_built.classes, (
                CHANGED + f"a compact Input with value {value!r} has classes {sorted(textual_built.classes)}, "
                f"compact_input_classes gives {sorted(prestyled.classes)}")
            assert prestyled.compact and prestyled.region.height == textual_built.region.height == 1, (
                CHANGED + "a compact Input is no longer one row without a border")


def made_compact_input(value: str, **kwargs: str) -> Input:
    """An Input built as the Config form builds its fields: `compact_input_classes`, then `make_compact`."""
    field = Input(value=value, classes=compat.compact_input_classes(value), **kwargs)
    compat.make_compact(field, Input.compact)
    return field


async def test_a_field_built_with_the_compact_classes_is_restyled_once_as_it_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class Textual adds to (or removes from) a field as it builds it restyles the field at once; with
    `compact_input_classes` only the `compact` reactive's own class is left to add (the Config form's rows, cold
    start). Given `-textual-compact` too, the reactive removed it first (its default) and added it back: two.
    `make_compact` adds that last one without a restyle: none before the mount."""
    from textual.dom import DOMNode

    restyled: dict[str, list[str]] = {"textual": [], "made": []}
    update = DOMNode.update_node_styles

    class Built(App[None]):
        def compose(self) -> ComposeResult:
            for how, build in (("textual", lambda: Input(value="3", compact=True, classes=compat.compact_input_classes("3"))),
                               ("made", lambda: made_compact_input("3"))):
                def counted(node: DOMNode, animate: bool = True, how: str = how) -> None:
                    restyled[how].append(type(node).__name__)
                    update(node, animate)

                monkeypatch.setattr(DOMNode, "update_node_styles", counted)
                field = build()
                monkeypatch.setattr(DOMNode, "update_node_styles", update)
                yield field

    async with Built().run_test(size=(40, 6)) as pilot:
        await pilot.pause()
    assert restyled["textual"].count("Input") <= 1, CHANGED + f"a compact field was restyled {restyled} times as it was built"
    assert restyled["made"] == [], f"make_compact restyled the field as it was built: {restyled}"


class MadeCompact(App[None]):
    """Textual's compact Input and Select beside those `make_compact` made compact (the Config form's fields)."""

    AUTO_FOCUS = None  # no cursor in either

    def compose(self) -> ComposeResult:
        from textual.widgets import Select

        yield Input(value="3", compact=True, classes=compat.compact_input_classes("3"), id="input-textual")
        yield made_compact_input("3", id="input-made")
        yield Select([("a", "a"), ("b", "b")], value="a", compact=True, id="select-textual")
        made: Select[str] = Select([("a", "a"), ("b", "b")], value="a", id="select-made")
        compat.make_compact(made, Select.compact)
        yield made


async def test_make_compact_builds_the_compact_input_and_select_textual_builds() -> None:
    """`make_compact` relies on Textual's `compact` reactive toggling `-textual-compact` and nothing else: the
    widgets it makes have Textual's compact widgets' classes, value, size and every drawn line (the Select's
    overlay too, which takes `compact` from its Select)."""
    from textual.widgets import Select

    app = MadeCompact()
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        for kind in ("input", "select"):
            textual_built, made = app.query_one(f"#{kind}-textual"), app.query_one(f"#{kind}-made")
            assert isinstance(textual_built, Input | Select) and isinstance(made, Input | Select)
            assert made.classes == textual_built.classes and made.compact is textual_built.compact is True, (
                CHANGED + f"a compact {kind} has classes {sorted(textual_built.classes)}; make_compact gives "
                f"{sorted(made.classes)}")
            assert made.region.size == textual_built.region.size, CHANGED + f"make_compact's {kind} has another size"
            lines = [[(segment.text, segment.style) for segment in widget.render_line(y)] for widget in (textual_built, made)
                     for y in range(widget.region.height)]
            half = len(lines) // 2
            assert lines[:half] == lines[half:], CHANGED + f"make_compact's {kind} is drawn otherwise"
        overlays = [select.query_one("SelectOverlay") for select in app.query(Select)]
        assert overlays[0].classes == overlays[1].classes, CHANGED + "a compact Select's overlay has other classes"


def cycles_left_by(use: Callable[[Strip], object]) -> int:
    """How many unreachable objects the collector finds after `use` is given a fresh strip that is then dropped:
    0 when reference counting freed everything."""
    gc.collect()
    gc.disable()
    try:
        strip = Strip([Segment("abc"), Segment("def", RichStyle(bold=True))])
        use(strip)
        del strip
        return gc.collect()
    finally:
        gc.enable()


def test_textual_still_keeps_a_whole_strip_in_its_own_caches() -> None:
    """The reason for `strips_freed_without_the_collector`: if this fails, Textual stopped caching a strip in
    itself and the wrapper can go."""
    compat.strips_freed_without_the_collector()
    divide = getattr(Strip.divide, "specdec_original", None)
    crop_extend = getattr(Strip.crop_extend, "specdec_original", None)
    assert divide is not None and crop_extend is not None, CHANGED + "Strip.divide / crop_extend were not wrapped"
    assert cycles_left_by(lambda strip: divide(strip, [6])) > 0, (
        CHANGED + "Strip.divide of the whole width no longer caches the strip in itself: remove the wrapper")
    assert cycles_left_by(lambda strip: crop_extend(strip, 0, 6, None)) > 0, (
        CHANGED + "Strip.crop_extend of the whole width no longer caches the strip in itself: remove the wrapper")


def test_the_wrapped_strip_methods_answer_the_same_strips_and_leave_nothing_for_the_collector() -> None:
    compat.strips_freed_without_the_collector()
    compat.strips_freed_without_the_collector()  # once: a second call wraps nothing again
    divide, crop_extend = Strip.divide.specdec_original, Strip.crop_extend.specdec_original  # type: ignore[attr-defined]
    assert getattr(divide, "specdec_original", None) is None
    for cuts in ([6], [6, 9], [2, 6], [0, 6], [3], [2, 4, 6], []):
        theirs = [s.text for s in divide(Strip([Segment("abc"), Segment("def")]), cuts)]
        ours = [s.text for s in Strip([Segment("abc"), Segment("def")]).divide(iter(cuts))]  # any iterable, as Textual's
        assert ours == theirs, cuts
    for start, end in ((0, 6), (-1, 6), (0, 8), (2, 6), (1, 3), (0, 4)):
        theirs_strip = crop_extend(Strip([Segment("abc"), Segment("def")]), start, end, None)
        ours_strip = Strip([Segment("abc"), Segment("def")]).crop_extend(start, end, None)
        assert (ours_strip.text, ours_strip.cell_length) == (theirs_strip.text, theirs_strip.cell_length), (start, end)
    assert cycles_left_by(lambda strip: strip.divide([6])) == 0
    assert cycles_left_by(lambda strip: strip.crop_extend(0, 6, None)) == 0
    assert cycles_left_by(lambda strip: [strip.divide([2, 6]), strip.crop_extend(1, 8, None)]) == 0



class Tables(App[None]):
    """One table of five rows, a plain DataTable or the panel's FocusKeptTable."""

    def __init__(self, kept: bool) -> None:
        super().__init__()
        self.kept = kept

    def compose(self) -> ComposeResult:
        from specdec_tui.ui.widgets.focus_kept_table import FocusKeptTable

        table = FocusKeptTable[str](id="table") if self.kept else DataTable[str](id="table", cursor_type="row")
        table.add_columns("a", "b")
        table.add_rows([(f"a{i}", f"b{i}") for i in range(5)])
        yield table
        yield Input()


async def test_table_rows_redrawn_drops_a_table_s_drawn_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    assert callable(getattr(DataTable, "_clear_caches", None)), CHANGED + "DataTable._clear_caches is gone"
    async with Tables(kept=True).run_test() as pilot:
        table = pilot.app.query_one(DataTable)
        await pilot.pause()
        region = table.content_region.reset_offset
        with cells_rendered(pilot.app, monkeypatch) as cells:
            table.render_lines(region)
        assert cells == []  # drawn for the frame already
        compat.table_rows_redrawn(table)
        with cells_rendered(pilot.app, monkeypatch) as cells:
            table.render_lines(region)
        assert cells != [], CHANGED + "DataTable._clear_caches keeps drawn cells"


def test_table_cell_styles_recomputed_clears_the_cell_styles_cache() -> None:
    cached = getattr(DataTable, "_get_styles_to_render_cell", None)
    assert cached is not None and callable(getattr(cached, "cache_clear", None)), (
        CHANGED + "DataTable._get_styles_to_render_cell is no longer an lru_cache")
    table = DataTable[str]()
    table._get_styles_to_render_cell(False, False, False, False, False, True, False, True, True)
    assert cached.cache_info().currsize > 0
    compat.table_cell_styles_recomputed(table)
    assert cached.cache_info().currsize == 0


async def focus_away_and_back_drawn(kept: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Cells a table draws as the focus leaves it and comes back, then as it is hidden and shown again."""
    async with Tables(kept).run_test() as pilot:
        app, table, field = pilot.app, pilot.app.query_one(DataTable), pilot.app.query_one(Input)
        for _ in range(2):  # drawn in both focus states
            table.focus()
            await pilot.pause()
            field.focus()
            await pilot.pause()
        with cells_rendered(app, monkeypatch) as focus_cells:
            table.focus()
            await pilot.pause()
            field.focus()
            await pilot.pause()
        with cells_rendered(app, monkeypatch) as resize_cells:  # hidden and shown again: a Resize of the size it had
            table.display = False
            await pilot.pause()
            table.display = True
            await pilot.pause()
            table.refresh()  # drawn again (as a tab's focus restyle asks): from its kept rows, or from scratch
            await pilot.pause()
        return len(focus_cells), len(resize_cells)


async def test_textual_still_draws_a_table_again_after_a_focus_change_or_a_resize_of_its_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason for `FocusKeptTable`: if this fails, Textual's DataTable keeps its drawn rows across a focus change
    and a Resize of the same size, and FocusKeptTable can go (a plain DataTable again)."""
    focus, resize = await focus_away_and_back_drawn(False, monkeypatch)
    assert focus > 0, CHANGED + "a focus change no longer drops a DataTable's rows: FocusKeptTable can go"
    assert resize > 0, CHANGED + "a Resize of the same size no longer drops a DataTable's rows: FocusKeptTable can go"
    assert await focus_away_and_back_drawn(True, monkeypatch) == (0, 0)
