"""Config values: what each TOML value must be (`convert` to a field's type), the range rules per key, the
examples shown in "write ..." hints, and the key names that mean someone pasted a secret."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import Any

from specdec_tui.core.config import MAX_CONCURRENCY

# Patterns are text, compiled by `re` on first use: this module loads before the panel's first frame.
# Names that mean "I am pasting a secret here". A bare `…_token` is left alone: `max_token` is a typo.
SECRET_KEY = (
    r"(?:[a-z0-9_-]*[_-])?(?:api[_-]?key|apikey|secret|password|passwd|(?:api|auth|access|bearer|hf)[_-]?token)|token|key"
)
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"

# Fields whose default is None: what to show in "write …" hints.
EXAMPLES: dict[str, Any] = {
    "port": 22,
    "user": "root",
    "identity_file": "~/.ssh/id_ed25519",
    "jump": "bastion",
    "workspace": "~/specdec-demo-2",
    "unit_path": "/etc/systemd/system/sglang.service",
    "api_key_env": "SGLANG_API_KEY",
    "requests": 32,
    "duration_s": 60.0,
    "model": "Qwen/Qwen3-8B",
    "nodes": ["gpu-0", "gpu-1"],
    "dist_init_addr": "gpu-0.example.net:50000",
}


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be greater than 0"


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _port(value: int) -> str | None:
    return None if 1 <= value <= 65535 else "must be a TCP port between 1 and 65535"


def _service_unit(value: str) -> str | None:
    return None if value.endswith(".service") and "/" not in value else 'must be a systemd unit name such as "sglang.service"'


def _url(value: str) -> str | None:
    return None if re.match(r"https?://[^/\s]+", value) else 'must be an http(s) URL such as "http://127.0.0.1:30000"'


def _env_name(value: str) -> str | None:
    return None if re.fullmatch(ENV_NAME, value) else "must be the NAME of an environment variable (letters, digits, _), not the key itself"


def _host_port(value: str) -> str | None:
    host, sep, port = value.rpartition(":")
    ok = sep and host and port.isdigit() and 1 <= int(port) <= 65535
    return None if ok else 'must be HOST:PORT that every node reaches node 0 on, such as "gpu-0.example.net:50000"'


def _concurrency(value: tuple[int, ...]) -> str | None:
    if not value:
        return "must list at least one level, e.g. [1, 4, 16, 32, 64]"
    if any(level < 1 for level in value):
        return "every level must be a positive number of parallel requests, e.g. [1, 4, 16, 32, 64]"
    if len(set(value)) != len(value):
        return "lists a level twice; give each concurrency level once"
    if max(value) > MAX_CONCURRENCY:
        return f"a level of {max(value)} is more than the {MAX_CONCURRENCY} parallel requests a benchmark opens"
    return None


def _length(value: str) -> str | None:
    from specdec_tui.core.lengths import parse_length

    try:
        parse_length(value)
    except ValueError as err:
        return str(err)
    return None


def _slo(value: tuple[str, ...]) -> str | None:
    from specdec_tui.core.slo import parse_slos

    try:
        parse_slos(value)
    except ValueError as err:
        return str(err)
    return None


def _burst(value: float) -> str | None:
    return None if value >= 1 else "must be ≥ 1 (requests per burst; 1 = no bursts)"


def _rate(value: float | None) -> str | None:
    return None if value is None or value > 0 else "must be a request rate > 0 (requests per second)"


RULES: dict[str, Callable[[Any], str | None]] = {
    "input_len": _length,
    "output_len": _length,
    "slo": _slo,
    "burst": _burst,
    "rate": _rate,
    "cooldown": _non_negative,
    "top_p": _non_negative,
    "port": _port,
    "dist_init_port": _port,
    "dist_init_addr": _host_port,
    "unit": _service_unit,
    "base_url": _url,
    "api_key_env": _env_name,
    "connect_timeout_s": _positive,
    "healthy_timeout_s": _positive,
    "concurrency": _concurrency,
    "requests": _positive,
    "duration_s": _positive,
    "warmup": _non_negative,
    "max_tokens": _positive,
    "temperature": _non_negative,
    "request_timeout_s": _positive,
    "stall_timeout_s": _positive,
    "level_timeout_s": _positive,
    "ttft_limit_s": _positive,
    "journal_lines": _positive,
}


def toml_text(value: object) -> str:
    """The value as it would be written in TOML (repr when TOML cannot hold it); only for error messages."""
    import tomlkit  # here: the start path (config.py → config_reader) never formats a value

    if isinstance(value, tuple):
        value = list(value)
    try:
        return str(tomlkit.item(value).as_string())
    except Exception:
        return repr(value)


def describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return "true or false"
    if hint is int:
        return "a whole number"
    if hint is float:
        return "a number"
    if hint is str:
        return "a quoted string"
    if origin is tuple:
        return "a list of quoted strings" if args[:1] == (str,) else "a list of whole numbers"
    if origin is dict:
        return "a table of quoted strings"
    if origin is typing.Literal:
        return "one of " + ", ".join(toml_text(a) for a in args)
    return "a value"


class BadValue(Exception):
    """A value that does not fit; the reader adds file, line and key."""


def convert(value: Any, hint: Any) -> Any:
    """The TOML value as the field's type, or `BadValue` saying what was expected."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return convert(value, inner[0])
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is tuple and args[:1] == (str,):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
    elif origin is tuple:
        if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
    elif origin is dict:
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return dict(value)
    elif origin is typing.Literal:
        if value in args:
            return value
    raise BadValue(f"expected {describe(hint)}, got {toml_text(value)}")
