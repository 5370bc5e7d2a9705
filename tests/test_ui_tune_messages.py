"""The Tune screen's worker hands every event to `tune_message` (one table by type, issue 34: no isinstance ladder
in the screen). What reaches the status line: a step's words, with its host when several hosts tune; nothing for a
step's "done" or another host's own search events."""

from __future__ import annotations

from specdec_tui.loop.events import Phase
from specdec_tui.loop.sweep_plan import OnHost
from specdec_tui.loop.tune import TuneStarted
from specdec_tui.ui.tune_messages import TuneBegan, TuneStep, tune_message


def _words(event: object) -> str | None:
    message = tune_message(event)
    assert message is None or isinstance(message, TuneStep)
    return None if message is None else message.words


def test_a_step_is_said_in_words_with_its_host_when_several_hosts_tune() -> None:
    assert _words(Phase("restart", "sglang.service")) == "restart: sglang.service"
    assert _words(Phase("bench")) == "bench"
    assert _words(OnHost("gpu-b", Phase("push", "3 flags"))) == "gpu-b: push: 3 flags"


def test_a_steps_done_and_another_hosts_own_events_are_not_shown() -> None:
    started = TuneStarted(candidates=4, refused=(), budget=6, resumed=0)
    assert tune_message(Phase("done")) is None
    assert tune_message(OnHost("gpu-b", Phase("done"))) is None
    assert tune_message(OnHost("gpu-b", started)) is None
    assert tune_message(object()) is None


def test_the_searchs_events_travel_in_their_own_class() -> None:
    started = TuneStarted(candidates=4, refused=(), budget=6, resumed=1)
    message = tune_message(started)
    assert isinstance(message, TuneBegan) and message.event is started
