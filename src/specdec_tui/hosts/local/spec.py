"""What the local host needs from a unit to run it: the loaded service spec (ExecStart, environment...).

Why a separate, frozen spec: systemd runs the unit it LOADED at daemon-reload, not the file on disk.
The local host keeps one of these from its last reload/restart, so a push alone changes nothing
that runs (and an automatic Restart= uses the loaded spec too), exactly as with real systemd.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from specdec_tui.core.systemd_quote import split_words
from specdec_tui.core.unit import UnitFile
from specdec_tui.core.unit_errors import UnitSyntaxError

BARE_PYTHONS = ("python", "python3")
_VAR_WORD = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_VAR_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TIME_UNITS = {"": 1.0, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "hr": 3600.0}


@dataclass(frozen=True)
class ServiceSpec:
    """The [Service] settings the local host honours, as loaded at the last daemon-reload."""

    unit: str
    argv: tuple[str, ...]
    description: str = ""
    ignore_failure: bool = False  # ExecStart=-...: a non-zero exit does not fail the unit
    environment: dict[str, str] = field(default_factory=dict)
    working_directory: str | None = None
    restart: str = "no"  # no | on-failure | always | on-abnormal
    restart_sec: float = 0.1
    timeout_stop_s: float | None = None  # None: the host's default
    start_limit_burst: int = 5
    start_limit_interval_s: float = 10.0

    @property
    def display_name(self) -> str:
        """How systemd names the unit in its own lines: `unit - Description`."""
        return f"{self.unit} - {self.description}" if self.description else self.unit

    def resolved_argv(self) -> list[str]:
        """argv with ${VAR}/$VAR expanded from Environment=, and a bare `python`/`python3` replaced by
        the panel's own interpreter (the demo unit may be written for a machine where `python` is the
        SGLang venv; here the sim must run in the panel's venv)."""
        argv = _expand(list(self.argv), self.environment)
        if argv and argv[0] in BARE_PYTHONS:
            argv[0] = sys.executable
        return argv


def _expand(argv: list[str], env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for word in argv:
        whole = _VAR_WORD.match(word)
        if whole:
            out.extend(env.get(whole.group(1), "").split())
            continue
        out.append(_VAR_BRACED.sub(lambda m: env.get(m.group(1), ""), word).replace("$$", "$"))
    return out


def parse_seconds(value: str, default: float | None) -> float | None:
    """systemd time spans as used here: `90`, `500ms`, `1min 30s`, `infinity` (→ None)."""
    value = value.strip()
    if not value:
        return default
    if value == "infinity":
        return None
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value):
        if unit not in _TIME_UNITS:
            return default
        total += float(number) * _TIME_UNITS[unit]
    return total


def _parse_environment(assignments: list[str], env_files: list[str]) -> dict[str, str]:
    """Environment= first, then the EnvironmentFile=s in order: "Settings from these files override settings made
    with Environment=" (systemd.exec)."""
    env: dict[str, str] = {}
    for assignment in assignments:
        for word in split_words(assignment):
            if "=" in word.value:
                key, value = word.value.split("=", 1)
                env[key] = value
    for path in env_files:
        optional = path.startswith("-")
        try:
            lines = Path(path.lstrip("-")).read_text().splitlines()
        except OSError:
            if optional:
                continue
            raise UnitSyntaxError(f"EnvironmentFile={path} cannot be read") from None
        for line in lines:
            line = line.strip()
            if line and not line.startswith(("#", ";")) and "=" in line:
                key, value = line.split("=", 1)
                env[key.strip()] = value.strip().strip('"').strip("'")
    return env


def load_spec(unit: str, text: str) -> ServiceSpec:
    """Reads what the local host runs from the unit text; raises UnitSyntaxError when it cannot run."""
    parsed = UnitFile.parse(text)
    exec_start = parsed.exec_start  # raises when [Service] has no ExecStart=
    if len([v for v in parsed.get_all("Service", "ExecStart") if v]) > 1:
        raise UnitSyntaxError("Type=simple allows only one ExecStart= line")
    if not exec_start.argv or not exec_start.argv[0]:
        raise UnitSyntaxError("ExecStart= is empty")

    def service(key: str, default: str = "") -> str:
        return parsed.get("Service", key) or default

    try:
        burst = int(service("StartLimitBurst") or parsed.get("Unit", "StartLimitBurst") or 5)
    except ValueError:
        burst = 5
    return ServiceSpec(
        unit=unit,
        argv=tuple(exec_start.argv),
        description=parsed.get("Unit", "Description") or "",
        ignore_failure="-" in exec_start.prefixes,
        environment=_parse_environment(
            [v for v in parsed.get_all("Service", "Environment") if v],
            [v for v in parsed.get_all("Service", "EnvironmentFile") if v],
        ),
        working_directory=service("WorkingDirectory") or None,
        restart=service("Restart", "no"),
        restart_sec=parse_seconds(service("RestartSec"), 0.1) or 0.1,
        timeout_stop_s=parse_seconds(service("TimeoutStopSec") or service("TimeoutSec"), None),
        start_limit_burst=burst,
        start_limit_interval_s=parse_seconds(parsed.get("Unit", "StartLimitIntervalSec") or "", 10.0) or 10.0,
    )
