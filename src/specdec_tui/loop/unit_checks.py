"""What must hold before an edit is pushed, and the short name a trial gets from what it changed."""

from __future__ import annotations

import os

from specdec_tui.core.config import HostConfig
from specdec_tui.core.flags import validate
from specdec_tui.core.unit import UnitFile, UnitSyntaxError


class WorkflowError(Exception):
    """A step of the loop refused or failed; the message says what and what to do."""


def api_key_from(host_config: HostConfig | None) -> str | None:
    """The API key comes from the environment variable the config names; it is never stored."""
    if host_config is None or not host_config.api_key_env:
        return None
    return os.environ.get(host_config.api_key_env) or None


def check_unit(text: str) -> UnitFile:
    """Parse and validate an edited unit; raise WorkflowError listing the errors that block a push."""
    try:
        unit = UnitFile.parse(text)
    except UnitSyntaxError as err:
        raise WorkflowError(f"the unit does not parse: {err} — fix the raw unit before pushing") from err
    errors = [issue for issue in validate(unit.flags()) if issue.level == "error"]
    if errors:
        listed = "; ".join(issue.message for issue in errors)
        raise WorkflowError(f"the edit has {len(errors)} error(s) that block a push: {listed}")
    return unit


def short_flag(name: str) -> str:
    """`speculative-num-steps` → `steps`, for trial labels that fit a chart legend."""
    short = name.removeprefix("speculative-").removeprefix("num-")
    return {"eagle-topk": "topk", "draft-tokens": "draft"}.get(short, short)


def change_label(previous: dict[str, str | None] | None, flags: dict[str, str | None]) -> str:
    """A short name for a trial: the flags that differ from the previous trial, e.g. `steps=3 draft=4`."""
    if previous is None:
        steps = flags.get("speculative-num-steps")
        return f"steps={steps}" if steps is not None else "baseline"
    parts = []
    for name in dict.fromkeys([*previous, *flags]):
        old, new = previous.get(name, "∅"), flags.get(name, "∅")
        if old != new:
            parts.append(f"{short_flag(name)}={'off' if new == '∅' else ('on' if new is None else new)}")
    return " ".join(parts) or "same flags"
