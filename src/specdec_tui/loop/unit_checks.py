"""What must hold before an edit is pushed: the unit parses and its flags hold no error; the API key's source."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from specdec_tui.core.config import HostConfig
from specdec_tui.core.unit_errors import UnitSyntaxError

if TYPE_CHECKING:  # the unit parser and flag tables are imported by check_unit: the panel builds its trial loop
    from specdec_tui.core.sglang_schema.schema import ReleaseSchema  # before its first frame and checks no
    from specdec_tui.core.unit import UnitFile  # unit until a push (~15 ms)


class WorkflowError(Exception):
    """A step of the loop refused or failed; the message says what and what to do."""


def api_key_from(host_config: HostConfig | None) -> str | None:
    """The API key comes from the environment variable the config names; it is never stored."""
    if host_config is None or not host_config.api_key_env:
        return None
    return os.environ.get(host_config.api_key_env) or None


def check_unit(text: str, schema: ReleaseSchema | None = None) -> UnitFile:
    """Parse and validate an edited unit by the host's release (`schema`; default the bundled 0.5.23); raise
    WorkflowError listing the errors that block a push."""
    from specdec_tui.core.flags import listed, validate_unit
    from specdec_tui.core.unit import UnitFile

    try:
        unit = UnitFile.parse(text)
    except UnitSyntaxError as err:
        raise WorkflowError(f"the unit does not parse: {err} — fix the raw unit before pushing") from err
    errors = [issue for issue in validate_unit(unit, schema) if issue.level == "error"]
    if errors:
        raise WorkflowError(f"the edit has {len(errors)} error(s) that block a push: {listed(errors)}")
    return unit
