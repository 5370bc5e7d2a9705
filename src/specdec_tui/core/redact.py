"""Keep API keys out of everything the panel writes or shows.

A unit may pass `--api-key KEY` to SGLang, and SGLang prints its ServerArgs (api_key included) at start.
So the key can reach the session file (unit text, flags), the demo journal file and the journal view.
Each of those goes through here; the unit on the host keeps the real key, and a redacted unit pushed
back (replay of a saved trial) gets the key restored from the running unit (`restore_secrets`).
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
SECRET_FLAGS = ("api-key", "admin-api-key")

# Patterns are kept as text and compiled by `re` on first use (its cache): this module loads before the panel's
# first frame, which does not use them.
_VALUE = r"""("[^"\n]*"|'[^'\n]*'|[^\s"'\\]+)"""
# `--api-key KEY`, `--api-key=KEY`, `--api-key \<newline>    KEY` (a unit's continuation line)
_FLAG_RE = r"(--(?:admin-)?api-key)((?:=|[ \t]+|[ \t]*\\\r?\n[ \t]*)+)" + _VALUE
# ServerArgs(..., api_key='KEY', admin_api_key="KEY") as SGLang logged it before 0.5.23, and 0.5.23's dict
# {..., 'api_key': 'KEY', 'admin_api_key': 'KEY'} (entrypoints/engine.py logs server_args={resolved dict})
_REPR_RE = r"""(\b(?:admin_)?api_key['"]?\s*[=:]\s*)('[^']*'|"[^"]*")"""
_BEARER_RE = r"(?i)(\bBearer\s+)([^\s'\",]+)"
_HINTS = ("api-key", "api_key", "bearer", "Bearer")


def redact_text(text: str) -> str:
    """The text with every API key value replaced by `<redacted>` (units, log lines, error messages)."""
    if not any(hint in text for hint in _HINTS):
        return text  # the common case, cheap: journal lines arrive thousands a second
    text = re.sub(_FLAG_RE, lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = re.sub(_REPR_RE, lambda m: m.group(1) + ("'" + REDACTED + "'" if m.group(2) not in ("''", '""') else m.group(2)), text)
    return re.sub(_BEARER_RE, lambda m: m.group(1) + REDACTED, text)


def redact_flags(flags: dict[str, str | None]) -> dict[str, str | None]:
    return {name: (REDACTED if name in SECRET_FLAGS and value is not None else value) for name, value in flags.items()}


def redact_strings(value: Any) -> Any:
    """`value` with every string in it masked (`redact_text`), for the free-form tables of a trial."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_strings(v) for v in value]
    return value


def has_redacted(text: str) -> bool:
    return REDACTED in text


def restore_secrets(text: str, source: str) -> str:
    """Put back the key values `text` had redacted, taken from `source` (the unit on the host)."""
    if not has_redacted(text):
        return text
    from specdec_tui.core.unit import UnitFile, UnitSyntaxError

    try:
        real = UnitFile.parse(source).flags()
        unit = UnitFile.parse(text)
    except UnitSyntaxError:
        return text
    wanted = {name: real[name] for name in SECRET_FLAGS
              if unit.flags().get(name) == REDACTED and real.get(name) not in (None, REDACTED)}
    return unit.set_flags(wanted).text if wanted else text
