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

from specdec_tui.core.systemd_quote import split_command, split_words
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


class _Sections:
    """Minimal unit reader used until `core.unit` lands (TODO: drop once UnitFile offers all values)."""

    def __init__(self, text: str) -> None:
        self.values: dict[tuple[str, str], list[str]] = {}
        section = ""
        logical = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not logical and (not line or line[0] in "#;"):
                continue
            if line.endswith("\\"):
                logical += line[:-1] + " "
                continue
            line, logical = logical + line, ""
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif "=" in line:
                key, value = line.split("=", 1)
                bucket = self.values.setdefault((section, key.strip()), [])
                if value.strip():
                    bucket.append(value.strip())
                else:
                    bucket.clear()  # an empty assignment resets a list setting, as in systemd

    def get(self, section: str, key: str) -> str | None:
        found = self.values.get((section, key))
        return found[-1] if found else None

    def get_all(self, section: str, key: str) -> list[str]:
        return list(self.values.get((section, key), []))


def _parse_environment(assignments: list[str], env_files: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
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
    for assignment in assignments:
        for word in split_words(assignment):
            if "=" in word.value:
                key, value = word.value.split("=", 1)
                env[key] = value
    return env


def load_spec(unit: str, text: str) -> ServiceSpec:
    """Reads what the local host runs from the unit text; raises UnitSyntaxError when it cannot run."""
    sections = _Sections(text)
    exec_starts = sections.get_all("Service", "ExecStart")
    if not exec_starts:
        raise UnitSyntaxError("[Service] has no ExecStart= setting, so there is nothing to start")
    if len(exec_starts) > 1:
        raise UnitSyntaxError("Type=simple allows only one ExecStart= line")
    prefixes, argv = split_command(exec_starts[0])
    core_argv = _argv_from_core_unit(text)
    if core_argv is not None:
        argv = core_argv
    if not argv or not argv[0]:
        raise UnitSyntaxError("ExecStart= is empty")
    svc = lambda key, default="": sections.get("Service", key) or default  # noqa: E731
    try:
        burst = int(svc("StartLimitBurst") or sections.get("Unit", "StartLimitBurst") or 5)
    except ValueError:
        burst = 5
    return ServiceSpec(
        unit=unit,
        argv=tuple(argv),
        description=sections.get("Unit", "Description") or "",
        ignore_failure="-" in prefixes,
        environment=_parse_environment(
            sections.get_all("Service", "Environment"), sections.get_all("Service", "EnvironmentFile")
        ),
        working_directory=svc("WorkingDirectory") or None,
        restart=svc("Restart", "no"),
        restart_sec=parse_seconds(svc("RestartSec"), 0.1) or 0.1,
        timeout_stop_s=parse_seconds(svc("TimeoutStopSec") or svc("TimeoutSec"), None),
        start_limit_burst=burst,
        start_limit_interval_s=parse_seconds(sections.get("Unit", "StartLimitIntervalSec") or "", 10.0) or 10.0,
    )


def _argv_from_core_unit(text: str) -> list[str] | None:
    """ExecStart's argv from the shared unit model when it is available (it is the source of truth
    for what the panel edits); None while `core.unit` is not there yet."""
    try:
        from specdec_tui.core.unit import UnitFile  # type: ignore[import-not-found]
    except ImportError:
        return None
    exec_start = UnitFile.parse(text).exec_start
    return list(exec_start.argv) if exec_start is not None else None
