"""A replay from the panel: every trial of the session run again byte for byte, with the drift of its
output tok/s beside the old figure — does last week's number still hold?

The worker runs `replay.replay_session` and only posts messages; the handlers own the state. The
replay module puts back the unit that ran before (also on cancel); the screen says what it did.
"""

from __future__ import annotations

import asyncio
import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from specdec_tui.core.compare import shown_label
from specdec_tui.core.level_pace import LevelPace
from specdec_tui.core.number_format import MISSING, fmt_delta, fmt_num
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.status_tone import Tone, rich_style, status_tone
from specdec_tui.core.words import in_words
from specdec_tui.loop.replay import ReplayOutcome, ReplayPair
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui import task_messages as tm
from specdec_tui.ui.screens.task_screen import (
    TaskCancelled,
    TaskFailed,
    TaskScreen,
)
from specdec_tui.ui.widgets.keyed_table import cell_plain, keyed_table

TOLERANCE_PCT = 10.0  # levels without per-request figures: drift within ±10 % reproduces (else 95 % intervals)

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "#"),
    ("trial", "trial"),
    ("status", "status"),
    ("old", "old c=1 tok/s"),
    ("new", "new c=1 tok/s"),
    ("drift", "worst drift"),
    ("verdict", "reproduces?"),
)


def _low_c_tok_s(trial: Trial) -> float | None:
    levels = sorted(trial.levels, key=lambda lv: lv.concurrency)
    return levels[0].output_tok_s if levels else None


class ReplayScreen(TaskScreen[ReplayOutcome]):
    """Replays `trials` (ids of `session`, all by default) through `runner`; dismisses with the ReplayOutcome."""

    TASK = "replay"
    BINDINGS = [Binding("escape,q", "close", "Cancel / back", id="replay-close")]
    DEFAULT_CSS = """
    ReplayScreen #replay-title { padding: 0 1; text-style: bold; }
    ReplayScreen #replay-status { padding: 0 1; height: auto; }
    ReplayScreen #replay-table { height: 1fr; }
    ReplayScreen #replay-result { padding: 0 1; height: auto; }
    """

    def __init__(self, runner: TrialLoop, session: Session, trial_ids: list[int] | None = None) -> None:
        super().__init__()
        from specdec_tui.loop.replay import replayable

        self.runner = runner
        self.session = session
        self.todo = replayable(session, trial_ids)
        self.status_by_id: dict[int, str] = {t.id: "pending" for t in self.todo}
        self.replays: dict[int, Trial] = {}
        self.current: int | None = None
        self._step: tuple[int, int, str, tuple[int, ...]] | None = None  # index, total, words, the trial's levels
        self.pace = LevelPace()  # its share done by its levels, for the time left (a lone trial had none)

    def compose(self) -> ComposeResult:
        yield Static(f"Replay {len(self.todo)} trial(s) of the session, each with its own unit and profile "
                     f"(reproduces: 95 % intervals overlap; ±{TOLERANCE_PCT:.0f}% without them)", id="replay-title",
                     markup=False)
        yield Static("starting…", id="replay-status", markup=False)
        yield keyed_table("replay-table", COLUMNS)
        yield Static("", id="replay-result", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#replay-table", DataTable)
        for trial in self.todo:
            table.add_row(*self._cells(trial), key=str(trial.id))
        if not self.todo:
            from specdec_tui.loop.replay import nothing_to_replay

            self.show_result(nothing_to_replay(self.session))
            return
        self.running = True
        self.run_replay_worker()

    @work(exclusive=True, group="replay")
    async def run_replay_worker(self) -> None:
        from specdec_tui.loop.replay import replay_session

        try:
            await self.runner.read_running()
            await replay_session(self.runner, self.session, trial_ids=[t.id for t in self.todo],
                                 on_event=self.post_task_event)
        except asyncio.CancelledError:
            self.post_message(TaskCancelled())
            raise
        except Exception as err:  # noqa: BLE001 - every failure becomes words
            self.post_message(TaskFailed(in_words(err)))

    @on(tm.ReplayStartedMessage)
    def _trial_started(self, message: tm.ReplayStartedMessage) -> None:
        event = message.event
        self.current = event.original.id
        self._set_status(event.original.id, "starting")
        label = f"replaying {shown_label(event.original)}"
        self.say(self.step_words(event.index, event.total, label))
        self._step = (event.index, event.total, label, tuple(event.original.profile.concurrency))
        self.pace.value_started()

    @on(tm.PhaseMessage)
    def _phase(self, message: tm.PhaseMessage) -> None:
        event = message.event
        if event.name == "restore":
            self.say(f"restore: {event.detail}")
        elif self.current is not None and event.name != "done":
            self._set_status(self.current, event.name)

    @on(tm.LevelStartedMessage)
    def _level_started(self, message: tm.LevelStartedMessage) -> None:
        self.pace.level_started(message.event.concurrency, time.monotonic())
        if self.current is not None:
            self._set_status(self.current, f"bench c={message.event.concurrency}")

    @on(tm.LevelProgressMessage)
    def _level_progress(self, message: tm.LevelProgressMessage) -> None:
        self._show_time_left()

    @on(tm.LevelDoneMessage)
    def _level_done(self, message: tm.LevelDoneMessage) -> None:
        self.pace.level_done(message.event.result.concurrency, time.monotonic())
        if self.current is not None:
            self._set_status(self.current, f"bench c={message.event.result.concurrency} done")
        self._show_time_left()

    def _show_time_left(self) -> None:
        """The time left counting the levels of the trial on its way (the sweep's rule, core.level_pace): a replay
        of one trial said "estimating the time left…" until it ended."""
        if self._step is not None and self.running:
            index, total, label, levels = self._step
            share = self.pace.share(levels, 1, time.monotonic())
            self.show_status(self.step_words(index, total, label, done=index + share))

    def show_cancelled(self) -> None:
        """The trial cut short says "cancelled" and those not reached "skipped" (they kept "bench c=4", "pending")."""
        for trial_id, status in list(self.status_by_id.items()):
            if status == "pending":
                self._set_status(trial_id, "skipped")
        if self.current is not None:
            self._set_status(self.current, "cancelled")

    @on(tm.ReplayDoneMessage)
    def _replay_done(self, message: tm.ReplayDoneMessage) -> None:
        self._done(message.event.outcome)

    def _done(self, outcome: ReplayOutcome) -> None:
        self.outcome = outcome
        self.running = False
        self.say(f"replay done: {len(outcome.pairs)} trial(s) replayed")  # it kept "replaying …, estimating …"
        table = self.query_one("#replay-table", DataTable)
        for pair in outcome.pairs:
            self.replays[pair.original.id] = pair.replay
            self.status_by_id[pair.original.id] = pair.replay.status
            for (key, _), cell in zip(COLUMNS, self._cells(pair.original, pair), strict=True):
                table.update_cell(str(pair.original.id), key, cell, update_width=True)
        where = {"original": "The host runs the unit it ran before the replay.",
                 "best": "The host runs the best replayed trial."}.get(outcome.left_on, outcome.left_on)
        intervals = "".join(f"{line}\n" for line in (p.confidence_line() for p in outcome.pairs) if line)
        self.show_result(
            f"{outcome.held_words(TOLERANCE_PCT)}. {where}\n{intervals}"
            "The replayed trials are in the session (label \"replay of …\"). Press escape to go back.")

    def _cells(self, trial: Trial, pair: ReplayPair | None = None) -> list[Text]:
        status = self.status_by_id.get(trial.id, "pending")
        cells = [Text(str(trial.id), justify="right"), Text(shown_label(trial)), Text(status, style=rich_style(status_tone(status))),
                 Text(fmt_num(_low_c_tok_s(trial)), justify="right")]
        if pair is None:
            return cells + [Text(MISSING, justify="right"), Text(MISSING, justify="right"), Text(MISSING)]
        drifts = [d for d in pair.drift.values() if d is not None]
        worst = max(drifts, key=abs) if drifts else None
        judged = pair.reproduction(TOLERANCE_PCT)  # by intervals where both kept per-request figures (issue 33)
        words = f"no: status {pair.replay.status}" if pair.original.status != pair.replay.status else judged.words()
        verdict = Text(words.replace("95 % intervals", "intervals").replace(" where no interval", ""),
                       style=rich_style(Tone.GOOD if judged.held else Tone.BAD, bold=not judged.held))
        return cells + [Text(fmt_num(_low_c_tok_s(pair.replay)), justify="right"), Text(fmt_delta(worst), justify="right"), verdict]

    def _set_status(self, trial_id: int, status: str) -> None:
        self.status_by_id[trial_id] = status
        self.query_one("#replay-table", DataTable).update_cell(str(trial_id), "status", Text(status), update_width=True)

    def cell_text(self, trial_id: int, column: str) -> str:
        return cell_plain(self.query_one("#replay-table", DataTable), str(trial_id), column)
