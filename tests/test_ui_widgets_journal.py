"""JournalPane in a tiny host app: batching under max_lines, follow/pause, filter, markers, highlights."""

from __future__ import annotations

from datetime import datetime

from textual.app import App, ComposeResult
from textual.color import Color

from specdec_tui.hosts.base import JournalRecord
from specdec_tui.ui.widgets.journal_pane import JournalPane

from .ui_helpers import restyled_ids

T0 = datetime(2025, 3, 1, 14, 3, 7)
DECODE = (
    "[2025-03-01 14:03:07 TP0] Decode batch, #running-req: 1, #token: 912, token usage: 0.01, "
    "accept len: 3.41, accept rate: 0.85, cuda graph: True, gen throughput (token/s): 233.95, #queue-req: 0, "
)
PREFILL = (
    "[2025-03-01 14:03:07 TP0] Prefill batch, #new-seq: 1, #new-token: 128, #cached-token: 0, "
    "token usage: 0.00, #running-req: 0, #queue-req: 0, "
)
ERROR = "[2025-03-01 14:03:08 TP0] Scheduler hit an exception: RuntimeError: CUDA error: out of memory"


def rec(i: int, message: str | None = None) -> JournalRecord:
    return JournalRecord(cursor=f"c{i}", timestamp=T0, message=message or f"line {i}")


class JournalHost(App):
    def __init__(self, max_lines: int = 200) -> None:
        super().__init__()
        self.max_lines = max_lines
        self.follow_changes: list[bool] = []

    def compose(self) -> ComposeResult:
        yield JournalPane(max_lines=self.max_lines, id="journal")

    def on_journal_pane_follow_changed(self, message: JournalPane.FollowChanged) -> None:
        self.follow_changes.append(message.following)


async def test_batched_records_keep_max_lines_and_newest_at_bottom() -> None:
    app = JournalHost(max_lines=100)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        for chunk in range(5):
            pane.add_records([rec(chunk * 100 + i) for i in range(100)])
        assert pane.shown_lines == []  # nothing written yet: it waits for the flush timer
        await pilot.pause(0.1)
        lines = pane.shown_lines
        assert len(lines) == 100
        assert lines[0].endswith("line 400") and lines[-1].endswith("line 499")
        assert pane.log_view.is_vertical_scroll_end


async def test_scrolling_up_pauses_counts_new_lines_and_end_resumes() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(i) for i in range(60)])
        await pilot.pause(0.1)
        pane.log_view.focus()
        await pilot.press("pageup")
        await pilot.pause()
        assert pane.following is False
        pane.add_records([rec(100 + i) for i in range(7)])
        await pilot.pause(0.1)
        assert pane.new_lines == 7
        status = str(pane.query_one("#journal-status").render())
        assert "7 new lines" in status
        assert not pane.log_view.is_vertical_scroll_end  # the reader's place is kept
        await pilot.press("end")
        await pilot.pause()
        assert pane.following is True and pane.new_lines == 0
        assert "following" in str(pane.query_one("#journal-status").render())
        assert app.follow_changes[-2:] == [False, True]


async def test_a_pause_restyles_the_status_line_alone() -> None:
    """Issue 34: the paused class was set on the pane, so each pause and resume (a key that scrolled the journal)
    applied the CSS of the pane and everything in it again before the key's answer could be drawn."""
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(i) for i in range(60)])
        await pilot.pause(0.1)
        pane.log_view.focus()
        await pilot.pause()
        with restyled_ids(app) as restyled:
            await pilot.press("pageup")
            await pilot.pause()
        status = pane.query_one("#journal-status")
        assert pane.following is False and status.has_class("-paused")
        assert "journal" not in restyled and "journal-log" not in restyled
        assert status.styles.background == Color.parse(app.get_css_variables()["warning-muted"])


async def test_filter_substring_regex_and_invalid_regex_message() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(1, DECODE), rec(2, PREFILL), rec(3, ERROR), rec(4, "plain text")])
        await pilot.pause(0.1)
        pane.log_view.focus()
        await pilot.press("slash")
        await pilot.press(*"prefill")
        await pilot.pause()
        assert list(pane.shown_lines) == [f"14:03:07 {PREFILL}"]
        assert "filter: prefill" in str(pane.query_one("#journal-status").render())

        assert pane.set_filter("/accept len: 3\\.\\d+|out of memory/") is None
        assert len(pane.shown_lines) == 2

        error = pane.set_filter("/decode(/")
        assert error is not None and "regular expression" in error
        await pilot.pause()
        assert pane.query_one("#journal-filter-error").display
        assert len(pane.shown_lines) == 4  # a broken pattern hides nothing

        pane.set_filter("")
        assert len(pane.shown_lines) == 4 and pane.filter_error is None


async def test_filter_applies_to_lines_arriving_later_and_escape_clears() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.log_view.focus()
        await pilot.press("slash", *"decode")
        pane.add_records([rec(1, DECODE), rec(2, "other")])
        await pilot.pause(0.1)
        assert len(pane.shown_lines) == 1
        await pilot.press("escape")
        await pilot.pause()
        assert len(pane.shown_lines) == 2
        assert not pane.has_class("-filtering")


async def test_marker_and_gap_are_rule_lines_in_order() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(1)])
        pane.add_marker("pushed sglang.service (backup 3)", when=T0)
        pane.add_records([JournalRecord(cursor="g", timestamp=T0, message="reconnected", kind="gap")])
        await pilot.pause(0.1)
        assert pane.shown_lines[1] == "──── 14:03:07 pushed sglang.service (backup 3) ────"
        assert pane.shown_lines[2] == "──── 14:03:07 reconnected ────"
        pane.clear()
        assert pane.shown_lines == []


def test_snapshot_journal_with_highlights(snap_compare) -> None:
    async def feed(pilot) -> None:
        pane = pilot.app.query_one(JournalPane)
        pane.add_records([rec(1, "Started sglang.service."), rec(2, PREFILL), rec(3, DECODE), rec(4, ERROR)])
        pane.add_marker("pushed steps=3", when=T0)
        pane.flush()
        await pilot.pause()

    assert snap_compare(JournalHost(), run_before=feed, terminal_size=(100, 12))


def _status(pane: JournalPane) -> str:
    return str(pane.query_one("#journal-status").render())


async def test_status_line_says_follow_state_line_count_and_filter_from_the_start() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        await pilot.pause()
        assert _status(pane) == "● following · 0 lines · / filter"  # never an empty line
        pane.add_records([rec(i) for i in range(1234 % 200)] + [rec(9, DECODE)])
        await pilot.pause(0.1)
        assert _status(pane).startswith("● following · 35 lines")
        pane.set_filter("decode")
        await pilot.pause()
        assert _status(pane) == "● following · 35 lines · filter: decode (1 shown)"
        pane.set_filter("")
        pane.add_records([rec(100 + i) for i in range(40)])
        await pilot.pause(0.1)
        pane.log_view.focus()
        await pilot.press("pageup")
        pane.add_records([rec(200 + i) for i in range(56)])
        pane.flush()  # the third burst in a row bigger than the view: a flood, flushed every 0.1 s
        await pilot.pause()
        assert _status(pane) == "⏸ paused · 56 new lines — End to follow"


async def test_no_scrollbar_takes_room_while_the_lines_fit() -> None:
    app = JournalHost()
    async with app.run_test(size=(60, 12)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(1, "short"), rec(2, DECODE)])  # DECODE is wider than the pane
        await pilot.pause(0.1)
        log = pane.log_view
        assert not log.show_vertical_scrollbar
        assert log.scrollable_content_region.size == log.content_region.size  # no bar row or column
        await pilot.press("tab")  # still readable sideways: the long line scrolls with →
        log.focus()
        await pilot.press("right")
        assert log.scroll_x > 0
        pane.add_records([rec(10 + i) for i in range(30)])
        await pilot.pause(0.1)
        assert log.show_vertical_scrollbar  # once they do not fit, a bar says there is more


# upstream: python/sglang/srt/utils/common.py set_uvicorn_logging_configs — access format
# '[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s' (uvicorn's levelprefix
# "INFO:     ", status_code "200 OK")
def access(path: str, method: str = "GET", status: str = "200 OK", peer: str = "127.0.0.1:51234") -> str:
    return f'[2025-03-01 14:03:07] INFO:     {peer} - "{method} {path} HTTP/1.1" {status}'


async def test_the_panels_own_health_checks_are_folded_counted_shown_with_h_and_found_by_a_filter() -> None:
    app = JournalHost(max_lines=500)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        own = [access("/health"), access("/v1/models"), access("/server_info"), access("/metrics"),
               access("/health_generate"), access("/get_server_info")]
        server = [access("/v1/chat/completions", "POST"), access("/generate", "POST"), DECODE]
        pane.add_records([rec(i, line) for i, line in enumerate(own * 20 + server)])
        pane.flush()
        await pilot.pause()
        shown = pane.shown_lines
        assert len(shown) == 3 and "POST /v1/chat/completions" in shown[0] and "Decode" in shown[2]
        assert "120 panel checks hidden (h shows)" in _status(pane)
        pane.log_view.focus()
        await pilot.press("h")
        assert len(pane.shown_lines) == 123 and "hidden" not in _status(pane)
        await pilot.press("h")
        assert len(pane.shown_lines) == 3
        pane.set_filter("/v1/models")  # a filter finds folded lines too
        assert len(pane.shown_lines) == 20 and all("GET /v1/models" in line for line in pane.shown_lines)
        pane.set_filter("")
        assert len(pane.shown_lines) == 3 and "120 panel checks hidden" in _status(pane)


async def test_the_hidden_count_forgets_lines_that_left_the_kept_window() -> None:
    app = JournalHost(max_lines=50)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(i, access("/health")) for i in range(40)])
        pane.flush()
        pane.add_records([rec(100 + i) for i in range(30)])  # pushes 20 health checks out of the 50 kept
        pane.flush()
        await pilot.pause()
        assert "20 panel checks hidden" in _status(pane)


def test_the_help_screen_lists_the_key_that_shows_the_folded_lines() -> None:
    from specdec_tui.ui.keymap import WIDGET_SCOPES, key_rows

    rows = {row.binding_id: row for row in key_rows(WIDGET_SCOPES, {})}
    assert rows["journal.own"].keys == "h" and "panel checks" in rows["journal.own"].description


def test_a_decode_line_shows_its_figures_in_columns_that_fit_160() -> None:
    from specdec_tui.core.sglang.journal_text import format_record

    # upstream: python/sglang/srt/managers/scheduler_components/metrics_reporter.py report_decode_stats
    line = format_record(rec(1, "[2025-03-01 14:03:07 DP0 TP0] Decode batch, #running-req: 17, #cached-token: 0, "
                                "#token: 91234, token usage: 0.45, accept len: 3.21, accept rate: 0.80, "
                                "cuda graph: True, gen throughput (token/s): 426.20, #queue-req: 3"))
    assert line.startswith("14:03:07 DP0 TP0 Decode │ running:  17 │ queue:   3 │ accept len: 3.21 │ gen:  426.2 tok/s │ "
                           "token usage: 0.45")
    assert len(line) <= 160 and line.index("accept len") < 60


async def test_closing_a_filter_returns_to_the_live_tail() -> None:
    """The view stayed where the filtered lines ended (minutes behind) while the status said following."""
    app = JournalHost(max_lines=5000)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(i) for i in range(2000)])
        await pilot.pause(0.1)
        pane.log_view.focus()
        await pilot.press("slash", *"line 19")
        await pilot.pause(0.1)
        await pilot.press("escape")
        await pilot.pause(0.1)
        pane.add_records([rec(5000 + i) for i in range(30)])
        pane.flush()
        await pilot.pause(0.1)
        log = pane.log_view
        assert "following" in _status(pane)
        assert log.is_vertical_scroll_end, f"at line {log.scroll_y:.0f} of {log.max_scroll_y}"
        assert log.lines[-1].endswith("line 5029")


async def test_the_count_is_every_line_received_and_says_how_many_the_history_keeps() -> None:
    """Issue 16: the pane's count equals the lines sent, also past `ui.journal_lines` (it counted only the kept
    lines, so a flood of 150,000 read "5,000 lines"); the filter still finds a line the flood scrolled past."""
    app = JournalHost(max_lines=100)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(i) for i in range(250)])
        pane.add_marker("pushed steps=3", when=T0)  # a marker is the panel's own line, not one received
        await pilot.pause(0.2)
        assert _status(pane).startswith("● following · 250 lines, newest 100 kept")
        pane.set_filter("line 160")
        await pilot.pause()
        assert [line.split(" ", 1)[1] for line in pane.shown_lines] == ["line 160"]


async def test_lines_made_by_the_worker_are_shown_as_given() -> None:
    app = JournalHost()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(1), rec(2)], ["text", "text"], lines=["14:03:07 first, as made", "14:03:07 second"])
        await pilot.pause(0.1)
        assert pane.shown_lines == ["14:03:07 first, as made", "14:03:07 second"]



async def test_a_coloured_line_shows_its_words_and_sends_no_escape_codes_to_the_terminal() -> None:
    """SGLang prints a deprecated flag's warning in bold yellow; a line could as well set the window title. The
    journal shows the words, finds them with the filter, and paints no escape code (Textual's `Log`, which this
    view replaced, sent ESC on to the terminal)."""
    warning = ("[2026-10-02 17:39:00] \x1b[1;33m'--enable-old-cache' is deprecated and will be removed in a future "
               "release.\x1b[0m")
    app = JournalHost()
    async with app.run_test(size=(160, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_records([rec(1, warning), rec(2, "title \x1b]0;owned\x07 set, \x15 and DEL \x7f dropped, C1 \x9b")])
        await pilot.pause(0.1)
        assert pane.shown_lines == [
            "14:03:07 [2026-10-02 17:39:00] '--enable-old-cache' is deprecated and will be removed in a future release.",
            "14:03:07 title  set,  and DEL  dropped, C1 ",  # core.terminal_codes.terminal_safe
        ]
        painted = [pane.log_view.render_line(y).text for y in range(2)]
        assert painted[0].startswith("14:03:07 [2026-10-02 17:39:00] '--enable-old-cache' is deprecated")
        assert painted[1].startswith("14:03:07 title  set,  and DEL  dropped, C1 ")
        assert not any(ch in line for line in painted for ch in "\x1b\x07\x15\x7f")
        pane.set_filter("is deprecated and")
        await pilot.pause()
        assert len(pane.shown_lines) == 1


async def test_the_healthy_marker_goes_below_the_servers_ready_line() -> None:
    """Issue 35 (10): "healthy" landed above "The server is fired up and ready to roll!": the health probe
    answers before the journal's batch with that line arrives."""
    ready = "[2025-03-01 14:03:09] The server is fired up and ready to roll!"
    app = JournalHost()
    async with app.run_test(size=(100, 24)) as pilot:
        pane = app.query_one(JournalPane)
        pane.add_marker("restart: done", when=T0)
        pane.add_records([rec(1)], ["text"])
        pane.add_marker("healthy", when=T0, after="ready")
        await pilot.pause(0.1)
        pane.add_records([rec(2, ready), rec(3)], ["ready", "text"])
        await pilot.pause(0.1)
        shown = [line.split("] ")[-1] for line in pane.shown_lines]
        assert shown.index("──── 14:03:07 healthy ────") == shown.index("The server is fired up and ready to roll!") + 1
        # the line came first this time: the marker goes in at once, below it
        pane.add_marker("restart: done", when=T0)
        pane.add_records([rec(4, ready)], ["ready"])
        pane.add_marker("healthy again", when=T0, after="ready")
        await pilot.pause(0.1)
        assert pane.shown_lines[-1] == "──── 14:03:07 healthy again ────"
