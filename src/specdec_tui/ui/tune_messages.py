"""What the Tune screen's worker posts: one message class per tune event (`loop.tune`), each handled with `@on`
by the screen. Loaded with the screen, not on the panel's start."""

from __future__ import annotations

from textual.message import Message

from specdec_tui.loop.tune import LaunchLanded, LaunchStarted, TuneOutcome, TuneStarted
from specdec_tui.loop.tune_adaptive import AdaptiveCheck


class TuneBegan(Message):
    """The space is known: how many candidates, how many the release refuses, launches resumed."""

    def __init__(self, event: TuneStarted) -> None:
        super().__init__()
        self.event = event


class TuneLaunching(Message):
    """A launch is on its way: which configuration, on which host, and why the search chose it."""

    def __init__(self, event: LaunchStarted) -> None:
        super().__init__()
        self.event = event


class TuneLanded(Message):
    """A launch measured every level (or failed to start); the standing after it."""

    def __init__(self, event: LaunchLanded) -> None:
        super().__init__()
        self.event = event


class TuneStep(Message):
    """A step of the launch on its way (push, restart, wait, bench), for the status line."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words


class TuneAdaptiveChecked(Message):
    """The schedule ran as adaptive speculation across every level, judged against the schedule."""

    def __init__(self, check: AdaptiveCheck) -> None:
        super().__init__()
        self.check = check


class TuneFinished(Message):
    """The search ended: the choice, its confidence, the schedule; the host runs the unit it ran before."""

    def __init__(self, outcome: TuneOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class TuneStopped(Message):
    """The tune stopped before its end (an error in words, or a cancel); the unit that ran before is back."""

    def __init__(self, reason: str, *, cancelled: bool = False) -> None:
        super().__init__()
        self.reason = reason
        self.cancelled = cancelled
