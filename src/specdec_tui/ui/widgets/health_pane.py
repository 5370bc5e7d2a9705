"""The server at a glance: a big state badge, the capacity the restart actually got, live decode numbers.

After a push the operator waits for READY and then wants to know what the flags cost: the seed's
max_running_requests fell 26→21→17 as speculative steps rose. So the facts the server reports about
itself (not the flags we asked for) sit next to the journal's live accept length and throughput, and
max_running_requests says what bound it when the journal's concurrency line did ("26, bound by mamba state").

Public API (for the app shell):
    HealthPane(id=...)
    .update_health(snapshot: HealthSnapshot)   # from specdec_tui.loop.health.watch_health
    .update_log_stats(stats: LogStats)         # folded from the journal; redrawn at most ~5×/s
    .update_gpus(gpus: list[GpuFact])          # from Host.gpu_facts(); [] hides the GPU section
    .state: str                                # "down" | "starting" | "loading" | "warming up" | "ready" | "failing" | "unknown"
    .section_text(name) -> str                 # plain text of "badge", "service", "facts", "live", "error", "gpus"
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from specdec_tui.core.number_format import MISSING, fmt_int, fmt_mib, fmt_num, fmt_pct
from specdec_tui.core.progress import duration_words
from specdec_tui.core.results import ServerFacts
from specdec_tui.core.sglang.stats import LogStats
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts.base import GpuFact
from specdec_tui.loop.health import HealthSnapshot
from specdec_tui.ui.frame_clock import until_next
from specdec_tui.ui.text_bars import text_bar
from specdec_tui.ui.widgets.alike_rows import AlikeRows

STATES = ("down", "starting", "loading", "warming up", "ready", "failing")
SECTIONS = ("badge", "wait", "service", "facts", "live", "error", "gpus")
_LABEL_WIDTH = 22
STATS_REDRAW_S = 0.2


class HealthPane(VerticalScroll, AlikeRows):
    """State badge, systemd/HTTP status, server facts, live journal numbers and GPU bars (API in module doc)."""

    DEFAULT_CSS = """
    HealthPane {
        height: 1fr;
        padding: 0 1;
        #health-badge {
            height: 3; width: 100%; content-align: center middle; text-style: bold;
            background: $panel; color: $text-muted;
        }
        #health-badge.-ready { background: $success; color: $text; }
        #health-badge.-loading, #health-badge.-starting, #health-badge.-warming-up { background: $warning; color: $text; }
        #health-badge.-failing { background: $error; color: $text; }
        #health-badge.-down { background: $error-muted; color: $text-error; }
        #health-service { color: $text-muted; margin-bottom: 1; }
        #health-facts, #health-live { margin-bottom: 1; }
        #health-error { color: $text-error; margin-bottom: 1; }
        #health-wait { color: $text-warning; margin-bottom: 1; }
        #health-error.-empty, #health-gpus.-empty, #health-wait.-empty { display: none; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id=id, classes=classes)
        self.clock = clock  # how long a wait has lasted (a fixed one in snapshots)
        self.state = "unknown"
        self._snapshot: HealthSnapshot | None = None
        self._stats: LogStats | None = None
        self._stats_timer: Timer | None = None
        self._wait: tuple[float, float] | None = None  # (time.monotonic() the wait began, its timeout in s)
        self._stats_before_wait: LogStats | None = None  # the journal figures when the wait began
        self._wait_timer: Timer | None = None
        self._shown: dict[str, str | Text] = {}  # what each section shows now, or once the pane is shown (`_set`)
        self._unshown: set[str] = set()  # sections changed while the pane was off screen
        self._painted: dict[str, str | Text] = {}  # what each section's Static holds (the last `update`)
        self._empty_unshown: dict[str, bool] = {}  # `-empty` classes wanted while the pane was off screen

    def compose(self) -> ComposeResult:
        yield Static("? UNKNOWN — no health check yet", id="health-badge")
        yield Static("", id="health-wait", classes="-empty")
        yield Static("", id="health-service")
        yield Static("", id="health-facts")
        yield Static("", id="health-live")
        yield Static("", id="health-error", classes="-empty")
        yield Static("", id="health-gpus", classes="-empty")

    def on_mount(self) -> None:
        self._render_facts()
        self._render_live()

    def section_text(self, name: str) -> str:
        """A section's text (as it shows, or will once the pane is back on screen)."""
        if name in self._unshown:
            content = self._shown[name]
            return content.plain if isinstance(content, Text) else Text.from_markup(content).plain
        rendered = self.query_one(f"#health-{name}", Static).render()
        return rendered.plain if hasattr(rendered, "plain") else str(rendered)

    # -- public API ------------------------------------------------------------------------------

    def update_health(self, snapshot: HealthSnapshot) -> None:
        self._snapshot = snapshot
        self.state = str(snapshot.state.value if hasattr(snapshot.state, "value") else snapshot.state)
        # On the badge, the one widget the state colours, in one batch: on the pane, each class changed re-applied the
        # CSS of the pane and all its sections, twice per change (one class off, one on) in each of the three panes:
        # ~40 ms of the panel's loop per health change, every restart of a sweep (issue 34).
        self.query_one("#health-badge", Static).update_classes({f"-{state.replace(' ', '-')}": self.state == state for state in STATES})
        badge = f"{_BADGE_ICON.get(self.state, '?')} {self.state.upper()}"
        if snapshot.detail:
            badge += f" — {snapshot.detail}"
        self._set("badge", badge)
        self._set("service", _service_line(snapshot))
        self._render_facts()
        self._render_error()

    def update_log_stats(self, stats: LogStats) -> None:
        """Coalesced: a busy journal calls this per batch; the pane redraws at most ~5 times a second, on the beat
        the journal's writes keep (`frame_clock`), so a flood's numbers and lines share a frame."""
        self._stats = stats
        if self._stats_timer is None:
            self._stats_timer = self.set_timer(until_next(STATS_REDRAW_S), self._redraw_stats)

    def _redraw_stats(self) -> None:
        self._stats_timer = None
        if self._wait is not None:
            self._render_wait()
        self._render_live()
        self._render_facts()
        self._render_error()

    def start_wait(self, timeout_s: float, *, began: float | None = None) -> None:
        """A restart is waiting for the server to turn ready: show elapsed / timeout and the journal's last
        start-up step, redrawn every second until `end_wait`."""
        self._wait = (self.clock() if began is None else began, timeout_s)
        self._stats_before_wait = self._stats  # its phase is the stopped server's ("ready"): not this start's
        if self._wait_timer is None:
            self._wait_timer = self.set_interval(1.0, self._render_wait)
        self._render_wait()

    def end_wait(self) -> None:
        self._wait = None
        if self._wait_timer is not None:
            self._wait_timer.stop()
            self._wait_timer = None
        self._render_wait()

    def _render_wait(self) -> None:
        if self._wait is None:
            self._set("wait", "")
            self._set_empty("wait", True)
            return
        began, timeout_s = self._wait
        elapsed = max(0.0, self.clock() - began)
        stats = self._stats
        # "ready" from before the wait is the stopped server's (it read "LOADING … · ready"); a start-up step
        # already under way when the wait began (the panel opened mid-start) is this start's and stays
        stale = stats is self._stats_before_wait and stats is not None and stats.phase == "ready"
        phase = stats.phase if stats and stats.phase and not stale else "waiting for the journal"
        bar = text_bar(min(elapsed / timeout_s, 1.0) if timeout_s > 0 else 0.0, 16)
        self._set("wait", f"Waiting for ready: {duration_words(elapsed)} of {duration_words(timeout_s)} {bar} · {phase}")
        self._set_empty("wait", False)

    @property
    def wait_text(self) -> str:
        return self.section_text("wait")

    def update_gpus(self, gpus: list[GpuFact]) -> None:
        lines = [_gpu_line(gpu) for gpu in gpus]
        self._set("gpus", "\n".join(lines))
        self._set_empty("gpus", not lines)

    # -- sections --------------------------------------------------------------------------------

    def _render_facts(self) -> None:
        known = self._snapshot.facts if self._snapshot else None
        facts = known or ServerFacts()
        stats = self._stats or LogStats()
        model = facts.model or (self._snapshot.model if self._snapshot else "")
        max_running = facts.max_running_requests or stats.max_running_requests
        bound = stats.max_running_bound(max_running)
        rows = [
            ("model", model or MISSING),
            ("max_running_requests", fmt_int(max_running) + (f", bound by {bound}" if bound else "")),
            ("max_total_num_tokens", fmt_int(facts.max_total_num_tokens or stats.max_total_num_tokens)),
            ("context length", fmt_int(facts.context_len or stats.context_len)),
            ("speculative", (facts.speculative_words or MISSING) if known else MISSING),
        ]
        self._set("facts", _table("Server", rows))

    def _render_live(self) -> None:
        stats = self._stats or LogStats()
        rows = [
            ("accept len", MISSING if stats.accept_len is None else f"{stats.accept_len:.2f}"),
            ("gen throughput", MISSING if stats.gen_throughput is None
             else f"{fmt_num(stats.gen_throughput)} tok/s" + _ranks(stats, "gen_throughput", fmt_num, " + ")),
            ("#running-req", fmt_int(stats.running_req) + _ranks(stats, "running_req", lambda v: fmt_int(int(v)), " + ")),
            ("#queue-req", fmt_int(stats.queue_req)),
            ("token usage", fmt_pct(stats.token_usage) + _ranks(stats, "token_usage", fmt_pct, ", ")),
        ]
        # SGLang logs a batch only while it serves: an idle server's last figures stay, so they say when they were
        # logged (a new start clears them: LogStats)
        title = f"Live (journal, as of {stats.live_at:%H:%M:%S})" if stats.live_at else "Live (journal)"
        self._set("live", _table(title, rows))

    def _render_error(self) -> None:
        """The last error line, as text (a server's words are no markup: "[/]" in one raised) without its
        escape codes."""
        error = self._stats.last_error if self._stats else None
        text = f"Last error: {error.message or terminal_safe(error.raw)}" if error is not None else ""
        if not text and self._snapshot and self.state == "failing" and self._snapshot.detail:
            text = f"Failing: {self._snapshot.detail}"
        self._set("error", Text(text))
        self._set_empty("error", not text)

    def _set(self, section: str, content: str | Text) -> None:
        """Show `content` in a section. Nothing happens when it is what the section shows already; the screen
        is not laid out again when the new text takes the same rows; and while the pane is off screen (another
        tab) the text waits for the pane to be shown (a busy journal changes the live numbers ~5 times a second,
        and each re-layout re-rendered the whole screen)."""
        old = self._shown.get(section)
        if old is not None and type(old) is type(content) and old == content:
            return
        self._shown[section] = content
        if old is not None and not self.is_on_screen:
            self._unshown.add(section)
            return
        self._paint(section)

    def _set_empty(self, section: str, empty: bool) -> None:
        """Hide (`-empty`) or show a section. Off screen, like its text, once the pane is shown: each toggle changes
        the section's display, and Textual lays the whole screen out for it (a sweep's every restart toggled the
        wait line of three panes, two or three of them hidden behind other tabs)."""
        if self.is_on_screen:
            self._empty_unshown.pop(section, None)
            self.query_one(f"#health-{section}", Static).set_class(empty, "-empty")
        else:
            self._empty_unshown[section] = empty

    def _paint(self, section: str) -> None:
        """Put the section's text in its Static; laid out again only when it takes other rows than before."""
        content, old = self._shown[section], self._painted.get(section)
        widget = self.query_one(f"#health-{section}", Static)
        # a section not displayed (`-empty`) takes no rows: laid out when it is displayed (its class changes)
        widget.update(content, layout=widget.display and (old is None or not same_rows(old, content, widget.content_size.width)))
        self._painted[section] = content

    def on_show(self) -> None:
        """Back on screen: the sections that changed meanwhile. Not laid out again when they take the rows they
        took: the tab switch that showed the pane has just laid out the screen (a second layout after every
        switch to a tab with health numbers, under a flood, cost ~25 ms a switch)."""
        for section in self._unshown:
            self._paint(section)
        self._unshown.clear()
        for section, empty in self._empty_unshown.items():
            self.query_one(f"#health-{section}", Static).set_class(empty, "-empty")
        self._empty_unshown.clear()


_BADGE_ICON = {"ready": "●", "warming up": "◕", "loading": "◐", "starting": "◔", "failing": "✖", "down": "○"}


def _service_line(snapshot: HealthSnapshot) -> str:
    status = snapshot.status
    http = "http ok" if snapshot.http_ok else "http not answering"
    if status is None:
        return f"systemd: unknown · {http}"
    parts = [f"systemd: {status.active_state} ({status.sub_state or '?'})"]
    if status.main_pid:
        parts.append(f"PID {status.main_pid}")
    parts.append(f"restarts {status.n_restarts}")
    if status.result and status.result != "success":
        parts.append(f"result {status.result}")
    parts.append(http)
    return " · ".join(parts)


def same_rows(old: str | Text, new: str | Text, width: int) -> bool:
    """True when `new` surely takes the rows `old` took in a section `width` cells wide: as many lines, none
    wrapping (a line's raw text, markup and all, is never shorter than what it shows)."""
    old_lines = (old.plain if isinstance(old, Text) else old).split("\n")
    new_lines = (new.plain if isinstance(new, Text) else new).split("\n")
    return width > 0 and len(old_lines) == len(new_lines) and all(
        cell_len(line) <= width for line in (*old_lines, *new_lines))


def _ranks(stats: LogStats, name: str, fmt: Callable[[float], str], sep: str) -> str:
    """` (DP0 1,000 + DP1 100)`: each data-parallel rank's own figure beside the server's, when ranks log apart."""
    parts = stats.per_rank(name)
    return " (" + sep.join(f"DP{rank} {fmt(value)}" for rank, value in parts) + ")" if parts else ""


def _table(title: str, rows: Iterable[tuple[str, str]]) -> Text:
    text = Text(title + "\n", style="bold")
    for label, value in rows:
        text.append(f"  {label:<{_LABEL_WIDTH}}", style="dim")
        text.append(f"{value}\n")
    text.rstrip()
    return text


def _gpu_line(gpu: GpuFact) -> str:
    mem = gpu.memory_used_mib / gpu.memory_total_mib if gpu.memory_total_mib else 0.0
    return (
        f"GPU{gpu.index} {gpu.name[:18]:<18} mem {text_bar(mem, 10)} "
        f"{fmt_mib(gpu.memory_used_mib)}/{fmt_mib(gpu.memory_total_mib)}  "
        f"util {text_bar(gpu.utilization_pct / 100, 6)} {gpu.utilization_pct:3.0f}%"
    )
