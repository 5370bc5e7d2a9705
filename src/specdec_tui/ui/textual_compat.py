"""Every use of Textual's private API, in one place (issue 34): each says what it reads or overrides and why no
public API does the job. Checked against textual 8.2.8 (pyproject's pin names the range);
tests/test_textual_compat.py checks each use against the installed Textual and fails naming the use, so a Textual
release that changes one is a failed test here, not a panel that silently slows down or breaks.

Imports of Textual's widgets are made inside the functions: this module loads with the panel's first frame (and
in the cold-start probes), and must not pull in anything the first frame does not need."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Input

from specdec_tui.ui.escape_prefix import escape_then_key
from specdec_tui.ui.input_order import InputInOrder, is_click, is_typed

if TYPE_CHECKING:
    from rich.style import Style
    from textual._compositor import LayoutUpdate
    from textual.binding import Binding
    from textual.screen import Screen
    from textual.widgets import DataTable, Footer

CHECKED_WITH = "8.2.8"


def open_batches(app: App[Any]) -> int:
    """`App._batch_count`: how many `batch_update()`s are open. Textual drops every frame while one is (the app's
    whole start is one); `ui.first_paint` waits for the start batch to close before the first frame is real.
    No public API says whether frames are held."""
    return int(getattr(app, "_batch_count", 0))


def css_updates(app: App[Any]) -> int:
    """`App._css_update_count`: raised by every theme or CSS variable change. The panel's start skips the CSS
    refresh its own theme choice queued when nothing changed since (`SpecdecApp.refresh_css`)."""
    return int(app._css_update_count)


def footer_keys_from_first_compose(footer: Footer) -> None:
    """`Footer._bindings_ready`: False until the screen's first bindings update, and the footer composes no key
    while it is; set here so a footer shows its keys on the first frame (`StableFooter`, issue 16)."""
    from textual.widgets import Footer

    footer.set_reactive(Footer._bindings_ready, True)


def footer_key_type() -> type[Widget]:
    """`textual.widgets._footer.FooterKey`: the widget of one footer key (private module; `StableFooter` composes
    compact keys with their class already set, so Textual's watcher restyles nothing)."""
    from textual.widgets._footer import FooterKey

    return FooterKey


def focus_without_repaint() -> Reactive[Widget | None]:
    """A `Screen.focused` that does not repaint the whole screen on a focus change (Textual's is a reactive with
    the default repaint): a tab switch moved the focus twice and repainted every row twice (issue 16). Redefining
    it relies on Textual reading `focused` through the reactive only."""
    return Reactive(None, repaint=False)


def compact_input_classes(value: str) -> str:
    """The CSS classes Textual's Input gives itself when built with `compact=True` and `value` (its `compact`
    reactive toggles `-textual-compact`; `Input.validate`, run as the value is set, adds `-valid` to a value that
    passes — with no validators, any non-empty one). Each class added to a widget restyles it at once, its
    component classes too, even before it is mounted: two restyles per flag field, which the Config form's first
    frame paid for every row (cold start). `-valid` given at construction (`classes=`) is already there when Textual
    sets it, so it restyles nothing. `-textual-compact` is not given: the reactive's first set puts its default
    first (False: the class removed, a restyle) and then the value (the class added, another), so given beforehand
    it cost two restyles instead of one."""
    return "-valid" if value else ""


COMPACT_CLASS = "-textual-compact"


def make_compact(widget: Widget, compact: Reactive[bool]) -> None:
    """Make `widget` (an Input or Select built with `compact=False`, not yet mounted) what `compact=True` builds:
    Textual's `compact` reactive only toggles the class `-textual-compact`. Set through the reactive as Textual
    does, the class is added to a widget not yet in the DOM with a restyle (the whole stylesheet applied to it and
    its component classes, applied again when it is mounted): a tenth of the Config form's build (cold start,
    issue 34). Here the class is added without a restyle (public `add_class(update=False)`) and the reactive set
    without its watcher (public `set_reactive`); it relies on the reactive having no other effect."""
    widget.add_class(COMPACT_CLASS, update=False)
    widget.set_reactive(compact, True)


class KeysFirstInput(Input):
    """An Input that may act on a key before Textual's own key handler inserts text (`Input._on_key`, private:
    a widget's key bindings otherwise run only after the key has bubbled up to the app). Subclasses answer
    `key_first`; True means the key was handled."""

    async def key_first(self, event: events.Key) -> bool:
        return False

    async def _on_key(self, event: events.Key) -> None:
        if not await self.key_first(event):
            await super()._on_key(event)

    def own_bindings(self, key: str) -> list[Binding]:
        """The field's bindings of `key` (`Widget._bindings`, its own map: public `BINDINGS` lists the class's
        only, not those a keymap moved)."""
        return list(self._bindings.key_to_bindings.get(key, []))

    def restart_blink(self) -> None:
        """`Input._restart_blink`: the cursor shown at once after an edit, as Textual's own key handler does."""
        self._restart_blink()


class InputInOrderApp(App[None]):
    """`App.on_event` re-sequencing keys, pastes and clicks (`ui.input_order`; issue 34 point 5). No public API
    makes Textual hand out the next key only once the one before has run its bindings: `App.on_event` forwards a
    typed key at once to `self.focused or self.screen` (after the priority bindings), and a container's binding
    (Tab) runs only when the key has bubbled back up. Here the App holds each input while one is on its way, and
    follows the one sent along the way Textual gives it (the target's `ancestors_with_self`). What it relies on:
    driver input reaches `App.on_event` unforwarded, and the forward target is `focused or screen` —
    tests/test_textual_compat.py checks both, and that Textual still needs this (a burst across a Tab)."""

    input_order: InputInOrder  # built by the subclass, delivering through `deliver_input`

    def input_arriving(self) -> None:
        """Called for each typed key or click before it may be held (the panel pushes its first screen here)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and is_typed(event):
            keys = escape_then_key(event, lambda key: key in self.screen.active_bindings)
            if keys is not None:  # Escape and the key after it, read as one Alt key: each as typed, in order
                for key in keys:
                    await self.on_event(key)
                return
        if is_typed(event) or is_click(event):
            self.input_arriving()
            if self.input_order.hold(event):
                return  # an input before it is still on its way
        await self.deliver_input(event)

    async def deliver_input(self, event: events.Event) -> None:
        """Textual's own handling of `event`, then its way followed (`InputInOrder.sent`) until it is handled."""
        typed, click = is_typed(event), is_click(event)
        target = (self.focused or self.screen) if typed else None
        await super().on_event(event)
        if typed and target is not None and event.is_forwarded:
            await self.input_order.sent(event, target.ancestors_with_self)
        elif typed or click:
            await self.input_order.sent(event, [])  # handled where it arrived (a priority binding, a click)


def watch_frames(app: App[Any], seen: Callable[[Screen[Any], bool], None]) -> None:
    """For tests and probes, for the app's whole life: `seen(screen, dropped)` for every frame the app hands to its
    display (`App._display`), `dropped` when a batch holds it back (a terminal would not see it). A headless app
    writes nothing, but still hands every frame over; no public hook sees frames."""
    display = app._display

    def recorded(screen: Screen[Any], renderable: Any) -> None:
        if renderable is not None:
            seen(screen, open_batches(app) > 0)
        display(screen, renderable)

    app._display = recorded  # type: ignore[method-assign]


@contextmanager
def full_renders_counted(counts: list[int]) -> Iterator[None]:
    """For tests: one entry in `counts` per full-screen render (`Compositor.render_full_update`, private module),
    the cost a tab switch must not pay (issue 16)."""
    from textual._compositor import Compositor

    original = Compositor.render_full_update

    def counted(compositor: Compositor, *args: Any, **kwargs: Any) -> Any:
        counts.append(1)
        return original(compositor, *args, **kwargs)

    Compositor.render_full_update = counted  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        Compositor.render_full_update = original  # type: ignore[method-assign]


def _full_update(app: App[Any]) -> LayoutUpdate:
    """The screen's whole frame as the compositor would send it for a full repaint (the private `_compositor`)."""
    from textual._compositor import LayoutUpdate

    update = app.screen._compositor.render_update(full=True)
    assert isinstance(update, LayoutUpdate)  # a full update is one, whatever the signature says
    return update


def full_frame_text(app: App[Any]) -> str:
    """For tests: what the app would write to a terminal for a full repaint of its screen, escape codes included
    (the screen's private `_compositor`): what must hold no code that came from outside. No public API renders a
    whole frame as the terminal receives it. Colour codes are not for comparing: Rich keeps a style's codes from the
    first console that rendered it, whatever the colour system of the next (an earlier screenshot's truecolor, or
    this console's 16 colours)."""
    return _full_update(app).render_segments(app.console)


def frame_cells(app: App[Any]) -> list[list[tuple[str, Style | None]]]:
    """For tests: the screen's whole frame as rows of (character, its Rich style) per cell — what two widgets drawn
    alike are compared by (their styles, not the escape codes that depend on which console rendered a style
    first)."""
    rows: list[list[tuple[str, Style | None]]] = []
    for line in _full_update(app).strips:
        row: list[tuple[str, Style | None]] = []
        for strip in line:
            for segment in strip:
                if segment.control:
                    continue
                row.extend((char, segment.style) for char in segment.text)
        rows.append(row)
    return rows


def filter_paste_input() -> None:
    """`textual._xterm_parser.XTermParser.feed`, wrapped once: the data read from the terminal first passes a
    `core.paste_codes.PasteCodes` of its own parser (the colour codes inside a bracketed paste removed). Textual's
    parser cuts a paste at its first escape code and sends the rest as keys ahead of the Paste event, so a coloured
    paste landed reordered in a field. No public hook sees the terminal's data before that parser (every driver
    builds its own `XTermParser` in its input thread), so the class's `feed` is wrapped."""
    from textual._xterm_parser import XTermParser

    from specdec_tui.core.paste_codes import PasteCodes

    if getattr(XTermParser.feed, "specdec_paste_codes", False):
        return
    parse = XTermParser.feed

    def feed(self: XTermParser, data: str) -> Any:
        clean = self.__dict__.get("specdec_paste_codes")
        if clean is None:
            clean = self.__dict__["specdec_paste_codes"] = PasteCodes()
        return parse(self, clean(data))

    feed.specdec_paste_codes = True  # type: ignore[attr-defined]
    XTermParser.feed = feed  # type: ignore[method-assign]


def lenient_terminal_input() -> None:
    """`textual.drivers.linux_driver.getincrementaldecoder`, replaced once by one whose decoders turn bytes that
    are not UTF-8 into U+FFFD: the driver's input thread decodes the terminal's bytes strictly, and one such byte
    (a paste from a Latin-1 file, a terminal set to another encoding) ended the panel with a UnicodeDecodeError.
    The driver builds its decoder inside its input thread; no public API lets an app choose the error handler."""
    import codecs
    import functools

    from textual.drivers import linux_driver

    name = "getincrementaldecoder"  # the driver module's own import of codecs.getincrementaldecoder
    if getattr(getattr(linux_driver, name), "specdec_lenient", False):
        return

    def getincrementaldecoder(encoding: str) -> Callable[..., codecs.IncrementalDecoder]:
        return functools.partial(codecs.getincrementaldecoder(encoding), errors="replace")

    getincrementaldecoder.specdec_lenient = True  # type: ignore[attr-defined]
    setattr(linux_driver, name, getincrementaldecoder)


def strips_freed_without_the_collector() -> None:
    """`Strip.divide` and `Strip.crop_extend`, wrapped once so a strip never keeps itself in its own caches.
    Textual's compositor divides every strip of every frame at the chops' cuts; when the cut is the strip's whole
    width `divide` answers `[self]` and caches that list in the strip (`crop_extend` of the whole width the same):
    a reference cycle, so the strip, its seven FIFO caches and its segments outlived the frame until a full
    collection found them — 15,000-30,000 such objects a collection during a sweep, 60-110 ms with the event loop
    stopped and keys waiting (issue 34, measured with bench/sweep_keys.py). The wrapped methods answer the same
    strips without caching the strip in itself, so it is freed when the frame drops it. These are the methods'
    own semantics (a strip is immutable); no public API keeps the compositor from calling them."""
    from textual.strip import Strip

    if getattr(Strip.divide, "specdec_original", None) is not None:
        return
    divide, crop_extend = Strip.divide, Strip.crop_extend

    def whole_or_divided(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        cuts = list(cuts)
        width = self.cell_length
        if [cut for cut in cuts if cut <= width] == [width]:
            return [self]
        return divide(self, cuts)

    def whole_or_cropped(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    whole_or_divided.specdec_original = divide  # type: ignore[attr-defined]
    whole_or_cropped.specdec_original = crop_extend  # type: ignore[attr-defined]
    Strip.divide = whole_or_divided  # type: ignore[method-assign]
    Strip.crop_extend = whole_or_cropped  # type: ignore[method-assign]


def table_rows_redrawn(table: DataTable[Any]) -> None:
    """`DataTable._clear_caches()`: drops every drawn row, cell and line of a table. `FocusKeptTable` keeps them
    across a restyle that changed nothing they show (its focus: the caches are keyed by the focus state already)
    and drops them here when its looks did change (a theme). No public API drops them but a restyle, which is
    what calls this."""
    table._clear_caches()


def table_cell_styles_recomputed(table: DataTable[Any]) -> None:
    """`DataTable._get_styles_to_render_cell.cache_clear()`: the cursor's and header's cell styles, cached without
    the focus state in their key (a focused table's cursor is coloured, a blurred one's dimmed). Textual clears them
    on every restyle; `FocusKeptTable` does the same here while keeping the drawn rows, which are keyed by it."""
    table._get_styles_to_render_cell.cache_clear()
