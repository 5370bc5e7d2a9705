"""How a failed step is said to the user: one place for the dialog title, the journal marker and the trial's
failure text, so no screen builds "Healthy failed" or "failed: healthy: ..." from the step's id."""

from __future__ import annotations

from specdec_tui.loop.states import Step

# What happened, as a sentence's subject and verb (the reason follows after a colon).
_FAILED: dict[Step, str] = {
    Step.CONNECT: "could not connect to the host",
    Step.STATUS: "could not read the unit's status",
    Step.PUSH: "the push failed",
    Step.RESTART: "the unit could not be restarted",
    Step.HEALTHY: "the server did not become healthy",
    Step.ROLLBACK: "the rollback failed",
    Step.BENCH: "the benchmark failed",
    Step.JOURNAL: "could not read the journal",
    Step.HEALTH: "could not check the server's health",
}


def step_failed(step: Step) -> str:
    """What failed, in words, lower case: `the server did not become healthy`."""
    return _FAILED[step]


def step_failed_title(step: Step) -> str:
    """A dialog or notification title: `The server did not become healthy`."""
    words = _FAILED[step]
    return words[0].upper() + words[1:]


def failure_text(step: Step, reason: str) -> str:
    """A trial's failure: the reason alone when it already says what failed (the health wait's and the restart's
    own messages do), else what failed and then why."""
    reason = reason.strip().rstrip(".")
    if step in (Step.HEALTHY, Step.RESTART) and reason:
        return reason
    return f"{_FAILED[step]}: {reason}" if reason else _FAILED[step]
