"""Is an SSH host's unit file path usable? Checked when the config is loaded, so a bad `unit_path` (a space,
`;`, `..`, a relative path) is said as `file:line: hosts.NAME.unit_path: ...` instead of failing later."""

from __future__ import annotations

import re

from specdec_tui.core.config import HostConfig
from specdec_tui.core.config_values import toml_text

_REMOTE_PATH = r"/[A-Za-z0-9._@:+\-/]*"  # compiled by `re` on first use: checked only for SSH hosts
_LOCAL_ADDRESSES = ("", "local")  # as hosts.factory: such a host is the local demo host, unit_path unused


def unit_path_problem(path: str) -> str | None:
    """Why `path` cannot be the unit file's path on an SSH host (the remote commands take only absolute,
    plain paths, see hosts/commands.valid_path), or None when it can."""
    if not path.startswith("/"):
        return "must be an absolute path (starting with /)"
    if not re.fullmatch(_REMOTE_PATH, path):
        bad = sorted({c for c in path if not (c.isascii() and (c.isalnum() or c in "._@:+-/"))})
        shown = " ".join("space" if c == " " else repr(c) for c in bad)
        return f"may use only letters, digits and ._@:+-/ (it contains {shown})"
    parts = path.split("/")
    if ".." in parts or "." in parts or "//" in path or (len(path) > 1 and path.endswith("/")):
        return "must be a plain path: no '.' or '..' parts, no '//', no trailing '/'"
    return None


def check_unit_path(host: HostConfig) -> tuple[str, str] | None:
    """(key, what is wrong and what to write) when an SSH host's unit file path is unusable, else None.

    The path is `unit_path`, or derived from `unit` when unit_path is not set. A local host ignores both."""
    if host.address.strip().lower() in _LOCAL_ADDRESSES:
        return None
    example = (f'write unit_path = "/etc/systemd/system/{host.unit}"' if re.fullmatch(_REMOTE_PATH, "/" + host.unit)
               else 'write unit_path = "/etc/systemd/system/sglang.service"')
    if host.unit_path is not None:
        problem = unit_path_problem(host.unit_path)
        return ("unit_path", f"{problem} (got {toml_text(host.unit_path)}); {example}") if problem else None
    problem = unit_path_problem(host.resolved_unit_path)
    if problem is None:
        return None
    return ("unit", f"the unit file path it gives, {toml_text(host.resolved_unit_path)}, is not usable: {problem}; "
                    "name the unit with letters, digits and :_.-@ only, or set unit_path to the file's path")
