"""The push rules, one owner for the panel, the trial loop and every CLI verb (issue 34: `host push` pushed raw
text, with neither check nor secrets): a unit shown, saved or drafted with its API keys as `<redacted>` gets them
back from the unit being edited or the one on the host (`with_secrets`); a unit that cannot run, or whose hidden
key has nowhere to come from, is refused in words before anything reaches the host (`checked_push`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from specdec_tui.core.redact import REDACTED, has_redacted, restore_secrets
from specdec_tui.loop.unit_checks import WorkflowError, check_unit

if TYPE_CHECKING:  # the Config form imports with_secrets as it mounts: the host's records come with a host (cold start)
    from specdec_tui.core.sglang_schema.schema import ReleaseSchema
    from specdec_tui.hosts.base import Host, PushResult


def with_secrets(shown: str, *sources: str) -> str:
    """`shown` (from an editor, a draft, a session file) with its `<redacted>` keys put back from the first of
    `sources` that has them (an edit in progress first, then the unit on the host)."""
    for source in sources:
        if not has_redacted(shown):
            break
        shown = restore_secrets(shown, source)
    return shown


async def checked_push(host: Host, text: str, *, running: str | None = None,
                       schema: ReleaseSchema | None = None) -> tuple[str, PushResult]:
    """Push `text` to `host` under the rules: its hidden keys restored (from `running`, else the unit the host has
    now), then checked (`check_unit`, by `schema`: the host's SGLang release; default the bundled 0.5.23). Raises
    WorkflowError, in words, when it may not go; returns the text that was pushed (with its keys) and the host's
    result."""
    if has_redacted(text):
        text = with_secrets(text, running or await host.read_unit())
        if has_redacted(text):
            raise WorkflowError(f"the unit hides an API key ({REDACTED}) and the unit on the host has none to put "
                                "back: type the key into the unit, then push again")
    check_unit(text, schema)
    return text, await host.push(text)
