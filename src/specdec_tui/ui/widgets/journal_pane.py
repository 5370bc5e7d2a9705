"""The live journal tail: SGLang's log, coalesced, filterable, with its metric and error lines marked.

A busy server logs thousands of lines a second; writing each one to the screen would starve the
keyboard. So records are buffered and flushed into a `LineView` (which paints only the visible lines, once
each: `line_view`) at most ~20 times a second (5 while a flood lasts), and colouring happens at paint time.

Public API (for the app shell):
    JournalPane(max_lines=5000, id=...)          # max_lines: config `ui.journal_lines`
    .add_records(records, kinds=None, lines=None) # buffered; flushed within ~50 ms; kinds, lines: SGLang kind
                                                 # and display line per record (else made here)
    .add_marker(text: str)                       # "──── 14:03:07 pushed … ────" line
    .clear()                                     # forget every line
    .set_filter(pattern: str, *, regex=False) -> str | None   # "" clears; returns an error in words
    .open_filter() / .close_filter()             # show/hide the filter input (bound to "/" and escape)
    .follow()                                    # jump to the bottom and follow again (bound to "end")
    .show_own(shown: bool)                       # the panel's own health-check lines (folded by default; "h")
    .following: bool, .new_lines: int, .filter_error: str | None, .shown_lines: list[str], .own_hidden: int,
    .received: int                               # journal lines received (the status line's count; kept or not)
    .status_text() -> str                        # the line under the log: follow state, count, filter, folded
Messages: JournalPane.FollowChanged(following: bool) when the tail pauses or resumes.
Binding ids: "journal.filter", "journal.follow", "journal.close_filter", "journal.own" (remappable with set_keymap).

The panel's own probes (GET /health, /v1/models, … — `journal_lines.is_panel_probe`) are folded: counted on the
status line, shown with "h", and found by a filter like every other line.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from datetime import datetime

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Input, Static

from specdec_tui.core.sglang.journal_text import MARKER_RULE, format_record, marker_line
from specdec_tui.hosts.base import JournalRecord
from specdec_tui.ui.frame_clock import until_next
from specdec_tui.ui.keymap import JOURNAL_BINDINGS, bindings_of, current_keys
from specdec_tui.ui.widgets.alike_rows import AlikeRows
from specdec_tui.ui.widgets.journal_filter import LineFilter, compile_filter
from specdec_tui.ui.widgets.journal_lines import is_panel_probe
from specdec_tui.ui.widgets.journal_log import JournalLog

MARKER_HOLD_S = 2.0  # how long a marker waits for the journal line it follows (the journal is read in batches)
FLUSH_INTERVAL_S = 0.05  # at most 20 screen writes a second, however fast lines arrive
# While the log floods (the last two writes each brought more lines than a screen holds, so nobody reads them as
# they pass), at most 5 a second: each write re-renders every visible line, and frames are what keys wait behind.
FLOOD_FLUSH_INTERVAL_S = 0.2


class JournalPane(Vertical, AlikeRows):
    """Live journal tail with follow mode, a "/" filter and highlighted SGLang lines (API in module doc)."""

    DEFAULT_CSS = """
    JournalPane {
        height: 1fr;
        #journal-filter { display: none; height: 3; }
        #journal-filter-error { display: none; color: $text-error; height: auto; padding: 0 1; }
        #journal-status { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
        &.-filtering #journal-filter { display: block; }
        &.-filter-error #journal-filter-error { display: block; }
        #journal-status.-paused { background: $warning-muted; color: $text-warning; text-style: bold; }
    }
    """

    BINDINGS = JOURNAL_BINDINGS  # off the footer (80 columns are full): the status line names / and End

    # `var`, not `reactive`: the pane draws nothing of its own from these (its status line shows them), and a
    # reactive repainted the whole pane — every container under the journal re-rendered its rows — at each batch
    # of lines while paused (issue 34: ~20 % of a sweep's frame time, bench/sweep_keys.py at time scale 1)
    following: var[bool] = var(True)
    new_lines: var[int] = var(0)

    class FollowChanged(Message):
        """The tail paused (user scrolled up) or resumed following."""

        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    def __init__(self, max_lines: int = 5000, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.max_lines = max(1, max_lines)
        self._kept: deque[str] = deque(maxlen=self.max_lines)  # every line, filtered or not
        self._status_shown: str | None = None  # what the status line shows now
        self._pending: list[str] = []
        self._kinds: dict[str, str] = {}  # display line → kind the journal worker parsed
        self._flush_timer: Timer | None = None
        self._filter: LineFilter | None = None
        self.filter_error: str | None = None
        self._own_shown = False  # the panel's own probe lines: folded unless the user shows them
        self._own_kept = 0  # how many of the kept lines are the panel's own probes
        self.received = 0  # journal lines received since the pane started (kept or not): the status line's count
        self._log = JournalLog(max_lines=self.max_lines, on_scrolled=self._scrolled, id="journal-log",
                               known_kind=self._known_kind)
        self._flooding = False  # the last two flushes each wrote more lines than the view shows (FLOOD_FLUSH_INTERVAL_S)
        self._last_big = False
        self._held: tuple[str, str] | None = None  # a marker waiting for the line it follows: (marker, that kind)
        self._held_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter: text, or /regex/  (enter: keep, escape: clear)", id="journal-filter")
        yield Static("", id="journal-filter-error")
        yield self._log
        yield Static("", id="journal-status")

    def on_mount(self) -> None:
        self._render_status()

    @property
    def log_view(self) -> JournalLog:
        return self._log  # not a query: every flush reads it

    @property
    def shown_lines(self) -> list[str]:
        """The lines the log holds now (after the filter), oldest first."""
        return list(self.log_view.lines)

    # -- feeding ---------------------------------------------------------------------------------

    def add_records(self, records: Iterable[JournalRecord], kinds: list[str] | None = None, *,
                    lines: list[str] | None = None) -> None:
        """Queue journal records; they reach the screen with the next flush (≤ ~50 ms).

        `kinds` and `lines` (one per record, from the journal feed's parse and `format_record`) spare
        the pane a parse and a format per line."""
        records = list(records)
        if lines is None or len(lines) != len(records):
            lines = [format_record(record) for record in records]
        self.received += sum(record.kind == "line" for record in records)
        start = len(self._pending)
        self._pending.extend(lines)
        if self._held is not None and kinds is not None and self._held[1] in kinds:
            self._pending.insert(start + list(kinds).index(self._held[1]) + 1, self._release_held(write=False))
        if kinds is not None:
            self._kinds.update(zip(lines, kinds, strict=False))
            if len(self._kinds) > 2 * self.max_lines:  # forget lines that scrolled out of what is kept
                live = (*self._kept, *self._pending)
                self._kinds = {line: self._kinds[line] for line in live if line in self._kinds}
        self._schedule_flush()

    def add_marker(self, text: str, when: datetime | None = None, *, after: str | None = None) -> None:
        """A rule line marking an event (push, restart, reconnect, gap) in the flow of the log. `after`: the kind of
        journal line the event follows (the server's "fired up" line for "healthy"): the marker waits for that line,
        which the journal may deliver after the event is known, and goes right below it (below what came, if the
        line is not there within MARKER_HOLD_S, or was there already)."""
        line = marker_line(text, when)
        self._release_held()
        if after is not None and not self._seen_since_last_marker(after):
            self._held = (line, after)
            self._held_timer = self.set_timer(MARKER_HOLD_S, self._release_held) if self.is_mounted else None
            return
        self._pending.append(line)
        self._schedule_flush()

    def _seen_since_last_marker(self, kind: str) -> bool:
        for line in itertools.islice(reversed((*self._kept, *self._pending)), 2000):
            if self._kinds.get(line) == kind:
                return True
            if line.startswith(MARKER_RULE):
                return False
        return False

    def _release_held(self, *, write: bool = True) -> str:
        """The held marker, out of waiting (appended to what is pending unless `write` is False); "" when none."""
        if self._held_timer is not None:
            self._held_timer.stop()
            self._held_timer = None
        held, self._held = self._held, None
        if held is None:
            return ""
        if write:
            self._pending.append(held[0])
            self._schedule_flush()
        return held[0]

    def _known_kind(self, line: str) -> str | None:
        return self._kinds.get(line)

    def clear(self) -> None:
        self._release_held(write=False)
        self._kinds.clear()
        self._pending.clear()
        self._kept.clear()
        self.received = 0
        self.log_view.clear()
        self.new_lines = 0

    def _schedule_flush(self) -> None:
        if self._flush_timer is None and self.is_mounted:
            interval = FLOOD_FLUSH_INTERVAL_S if self._flooding else FLUSH_INTERVAL_S
            self._flush_timer = self.set_timer(until_next(interval), self.flush)  # on the health views' beat

    def flush(self) -> None:
        """Write the buffered lines now (the timer calls this; tests may too)."""
        self._flush_timer = None
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        big = len(batch) > max(self.log_view.size.height, 1)
        self._flooding, self._last_big = big and self._last_big, big  # two in a row: a flood, not one burst
        if len(batch) > self.max_lines:
            batch = batch[-self.max_lines :]
        evicted = max(0, len(self._kept) + len(batch) - self.max_lines)
        self._own_kept += sum(map(is_panel_probe, batch)) - sum(
            is_panel_probe(self._kept[i]) for i in range(min(evicted, len(self._kept))))
        self._kept.extend(batch)
        batch = [line for line in batch if self._shows(line)]
        if batch:
            self._write(batch)
        self._render_status()  # the line count moved

    def _write(self, lines: list[str]) -> None:
        log = self.log_view
        if self.following:  # following means at the end, whatever the view thought of its old scroll position
            log.write_lines(lines)
            log.scroll_end(animate=False, immediate=True, x_axis=False)
            return
        # Paused: keep the lines the user is reading in place although the top gets pruned.
        overflow = max(0, len(log.lines) + len(lines) - self.max_lines)
        old_y = log.scroll_y
        log.write_lines(lines)
        if overflow:
            log.scroll_to(y=max(0.0, old_y - overflow), animate=False, immediate=True)
        self.new_lines += len(lines)

    # -- follow mode -----------------------------------------------------------------------------

    def _scrolled(self, at_end: bool) -> None:
        if at_end != self.following:
            self.following = at_end

    def watch_following(self, following: bool) -> None:
        if following:
            self.new_lines = 0
        # on the status line, the one widget it colours: on the pane, the CSS of the pane and everything in it was
        # applied again at each pause and resume, ~10-25 ms of the key that scrolled (issue 34)
        for status in self.query("#journal-status"):
            status.set_class(not following, "-paused")
        self._render_status()
        self.post_message(self.FollowChanged(following))

    def watch_new_lines(self) -> None:
        self._render_status()

    def follow(self) -> None:
        """Jump to the newest line and keep following."""
        self.log_view.scroll_end(animate=False, immediate=True)
        self.following = True

    def action_follow(self) -> None:
        self.follow()

    # -- filter ----------------------------------------------------------------------------------

    def set_filter(self, pattern: str, *, regex: bool = False) -> str | None:
        """Show only kept lines matching `pattern` ("" shows all). Returns an error in words, or None."""
        compiled = compile_filter(pattern, regex=regex)
        if isinstance(compiled, str):
            self.filter_error = compiled
            self._filter = None
        else:
            self.filter_error = None
            self._filter = compiled
        self.query_one("#journal-filter-error", Static).update(self.filter_error or "")
        self.set_class(self.filter_error is not None, "-filter-error")
        self._rerender()
        return self.filter_error

    def _shows(self, line: str) -> bool:
        """A filter decides alone (it finds folded lines too); without one, the panel's own probes are folded."""
        if self._filter is not None:
            return self._filter.match(line)
        return self._own_shown or not is_panel_probe(line)

    @property
    def own_hidden(self) -> int:
        """The panel's own probe lines folded out of the view now."""
        return 0 if self._own_shown or self._filter is not None else self._own_kept

    def show_own(self, shown: bool) -> None:
        """Show or fold the panel's own health-check lines."""
        self._own_shown = shown
        self._rerender()

    def action_toggle_own(self) -> None:
        self.show_own(not self._own_shown)

    def _rerender(self) -> None:
        """Rewrite the view from the kept lines and return to the live tail. The scroll to the end is explicit:
        the view would keep the scroll position it had before the rewrite, which left the view where the filtered
        lines ended (minutes behind) while the status said following."""
        self.flush()
        log = self.log_view
        log.clear()
        log.write_lines([line for line in self._kept if self._shows(line)])
        log.scroll_end(animate=False, immediate=True, x_axis=False)
        self.call_after_refresh(self._settle_at_end)  # the filter input's row may come or go with this layout
        self.following = True
        self.new_lines = 0
        self._render_status()

    def _settle_at_end(self) -> None:
        if self.following and self.is_mounted:
            self.log_view.scroll_end(animate=False, immediate=True, x_axis=False)

    def open_filter(self) -> None:
        self.add_class("-filtering")
        self.query_one("#journal-filter", Input).focus()

    def close_filter(self, *, keep: bool = True) -> None:
        """Hide the input; `keep=False` also drops the filter."""
        field = self.query_one("#journal-filter", Input)
        if not keep and field.value:
            field.value = ""
            self.set_filter("")
        self.remove_class("-filtering")
        self.log_view.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # escape belongs to the app (cancel) unless the filter input is open
        if action == "close_filter":
            return self.has_class("-filtering")
        return True

    def action_open_filter(self) -> None:
        self.open_filter()

    def action_close_filter(self) -> None:
        self.close_filter(keep=False)

    @on(Input.Changed, "#journal-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        event.stop()
        self.set_filter(event.value)

    @on(Input.Submitted, "#journal-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close_filter(keep=True)

    # -- status line -----------------------------------------------------------------------------

    def status_text(self) -> str:
        """The line under the log: follow state, how many lines, the filter.

        "● following · 1,234 lines · / filter", "⏸ paused · 56 new lines — End to follow",
        with " · 128 panel checks hidden (h shows)" while the panel's own probes are folded and
        " · filter: decode (12 shown)" while a filter is set."""
        kept = len(self._kept)
        count = f"{self.received:,} line{'s' * (self.received != 1)}"
        if self.received > kept:  # older lines left the pane's history (ui.journal_lines); the host keeps them
            count += f", newest {kept:,} kept"
        if self.following:
            text = f"● following · {count}"
        else:
            text = f"⏸ paused · {self.new_lines:,} new line{'s' * (self.new_lines != 1)} — End to follow"
        if self.own_hidden:
            text += f" · {self.own_hidden:,} panel checks hidden ({self._key('journal.own')} shows)"
        elif self._own_shown and self._own_kept and self._filter is None:
            text += f" · {self._key('journal.own')} hides the panel's health checks"
        if self._filter is not None:
            text += f" · filter: {self._filter.source} ({len(self.log_view.lines):,} shown)"
        elif self.following:
            text += " · / filter"
        return text

    def _key(self, binding_id: str) -> str:
        """The key a journal binding answers to now (after the user's `[ui.keymap]`)."""
        keymap = getattr(self.app, "effective_keymap", {}) if self.is_attached else {}
        binding = next(b for b in bindings_of(JOURNAL_BINDINGS) if b.id == binding_id)
        return current_keys(binding, keymap).split(",")[0]

    def _render_status(self) -> None:
        # not `is_mounted`: that is still False inside on_mount, which left the line empty at start
        text = self.status_text()
        if text == self._status_shown:  # a Static update re-lays out the screen: skip it when nothing changed
            return
        found = self.query("#journal-status")
        if found:
            found.first(Static).update(text, layout=False)  # one fixed-height row: no re-layout of the screen
            self._status_shown = text
