"""The panel's configuration: hosts, benchmark profiles and UI settings (TOML, loaded with tomlkit).

The dataclasses here are the typed view every other module uses; the loader below turns a file into
them and reports a bad file as one `ConfigError` naming file, line and key.
"""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Callable, Literal

import tomlkit
from tomlkit.exceptions import ParseError

Endpoint = Literal["completions", "chat"]


@dataclass(frozen=True, slots=True)
class HostConfig:
    """One host the panel can drive. `api_key_env` names an environment variable: keys are never stored."""

    name: str
    address: str = ""  # host name or ~/.ssh/config alias; "" for the local demo host
    port: int | None = None  # None: ~/.ssh/config or 22
    user: str | None = None
    identity_file: str | None = None
    sudo: bool = False
    unit: str = "sglang.service"
    unit_path: str | None = None  # default /etc/systemd/system/<unit>
    base_url: str = "http://127.0.0.1:30000"
    api_key_env: str | None = None
    accept_new_host_key: bool = False
    connect_timeout_s: float = 10.0
    healthy_timeout_s: float = 900.0  # restart → healthy, else the trial fails (and may roll back)

    @property
    def resolved_unit_path(self) -> str:
        return self.unit_path or f"/etc/systemd/system/{self.unit}"


@dataclass(frozen=True, slots=True)
class BenchProfile:
    """How one benchmark run is shaped. Either `requests` per level or `duration_s` per level."""

    name: str = "default"
    endpoint: Endpoint = "completions"
    concurrency: tuple[int, ...] = (1, 4, 16, 32, 64)
    requests: int | None = 32  # per level (measured requests; warm-up comes on top)
    duration_s: float | None = None  # per level, instead of `requests`
    warmup: int = 1  # warm-up requests per worker... per level, excluded from results
    max_tokens: int = 256
    temperature: float = 0.0
    ignore_eos: bool = False
    prompts: str = "realistic"  # realistic | repetitive | path to a prompt file
    request_timeout_s: float = 120.0
    stall_timeout_s: float = 30.0  # no bytes for this long → the request counts as a stall error
    level_timeout_s: float = 900.0
    model: str | None = None  # None: first id of /v1/models


@dataclass(frozen=True, slots=True)
class UIConfig:
    theme: str = "specdec-dark"
    journal_lines: int = 5000
    auto_bench: bool = False  # start the benchmark when the server turns healthy after a push
    auto_rollback: bool = True  # roll back when a restart does not reach healthy in time
    keymap: dict[str, str] = field(default_factory=dict)  # binding id → keys, for App.set_keymap


@dataclass(frozen=True, slots=True)
class Config:
    hosts: dict[str, HostConfig] = field(default_factory=dict)
    profiles: dict[str, BenchProfile] = field(default_factory=lambda: {"default": BenchProfile()})
    ui: UIConfig = field(default_factory=UIConfig)
    default_host: str | None = None
    default_profile: str = "default"
    source: str | None = None  # the file it was loaded from

    def profile(self, name: str | None = None) -> BenchProfile:
        return self.profiles.get(name or self.default_profile) or BenchProfile()


# ---------------------------------------------------------------------------------------------
# Loader: TOML text → Config, with every mistake reported as file:line: key: what to write.


SCHEMA_VERSION = 1
CONFIG_ENV_VAR = "SPECDEC_TUI_CONFIG"


class ConfigError(Exception):
    """A bad config file, as one line: `<file>:<line>: <key.path>: <what is wrong, what to write>`."""

    def __init__(self, source: str, line: int | None, key: str, what: str) -> None:
        self.source = source
        self.line = line
        self.key = key
        self.what = what
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {key}: {what}" if key else f"{where}: {what}")


def find_config_path(cli_value: str | None) -> Path | None:
    """`--config`, else `$SPECDEC_TUI_CONFIG`, else the user config file if it exists."""
    from specdec_tui.core.paths import default_config_file

    if cli_value:
        return Path(cli_value).expanduser()
    from_env = os.environ.get(CONFIG_ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    default = default_config_file()
    return default if default.is_file() else None


def load_config(path: Path | str | None) -> Config:
    """No path → the defaults. A path that names no file is an error (the user asked for it)."""
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), None, "", "no such file; copy config.example.toml there or drop --config") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(str(path), None, "", f"cannot read the file ({err})") from None
    return parse_config(text, str(path))


def parse_config(text: str, source: str = "<config>") -> Config:
    """Parses and validates config TOML; raises one `ConfigError` for the first mistake."""
    try:
        data = tomlkit.parse(text).unwrap()
    except ParseError as err:
        what = re.sub(r"\s+at line \d+ col \d+$", "", str(err))
        raise ConfigError(source, err.line, _key_at_line(text, err.line), f"TOML syntax error: {what} (column {err.col})") from None
    return _ConfigReader(text, source).read(data)


def save_ui_theme(path: Path | str, theme: str) -> None:
    """Rewrites only `ui.theme`, keeping every comment and the rest of the file as written."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        doc = tomlkit.parse(text)
    except ParseError as err:
        raise ConfigError(str(path), err.line, "", "cannot save the theme: the file is not valid TOML; fix it first") from None
    if not text.strip():
        doc["schema_version"] = SCHEMA_VERSION
    ui = doc.get("ui")
    if ui is None:
        doc["ui"] = tomlkit.table()
        ui = doc["ui"]
    ui["theme"] = theme
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


# --- locating keys in the text ----------------------------------------------------------------

_BARE_OR_QUOTED = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
_DOTTED = rf"{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*"
_HEADER_LINE = re.compile(rf"^\s*\[\[?\s*(?P<key>{_DOTTED})\s*\]\]?")
_KEY_LINE = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=")


def _split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(_BARE_OR_QUOTED, key)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _scan_keys(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, full key path) for every table header and key/value line."""
    found: list[tuple[int, tuple[str, ...]]] = []
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER_LINE.match(line)
        if header:
            table = _split_dotted(header["key"])
            found.append((number, table))
            continue
        key = _KEY_LINE.match(line)
        if key:
            found.append((number, table + _split_dotted(key["key"])))
    return found


def _find_line(text: str, path: tuple[str, ...]) -> int | None:
    """The line that defines `path`, else the line of its longest defined prefix."""
    best_line, best_len = None, 0
    for number, key in _scan_keys(text):
        if len(key) > best_len and path[: len(key)] == key:
            best_line, best_len = number, len(key)
    return best_line


def _key_at_line(text: str, line: int) -> str:
    keys = [key for number, key in _scan_keys(text) if number <= line]
    return ".".join(keys[-1]) if keys else ""


# --- validation ---------------------------------------------------------------------------------

# Names that mean "I am pasting a secret here". A bare `…_token` is left alone: `max_token` is a typo.
_SECRET_KEY = re.compile(
    r"(?:[a-z0-9_-]*[_-])?(?:api[_-]?key|apikey|secret|password|passwd|(?:api|auth|access|bearer|hf)[_-]?token)|token|key"
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Fields whose default is None: what to show in "write …" hints.
_EXAMPLES: dict[str, Any] = {
    "port": 22,
    "user": "root",
    "identity_file": "~/.ssh/id_ed25519",
    "unit_path": "/etc/systemd/system/sglang.service",
    "api_key_env": "SGLANG_API_KEY",
    "requests": 32,
    "duration_s": 60.0,
    "model": "Qwen/Qwen3-8B",
}


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be greater than 0"


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _port(value: int) -> str | None:
    return None if 1 <= value <= 65535 else "must be a TCP port between 1 and 65535"


def _service_unit(value: str) -> str | None:
    return None if value.endswith(".service") and "/" not in value else 'must be a systemd unit name such as "sglang.service"'


_REMOTE_PATH = re.compile(r"/[A-Za-z0-9._@:+\-/]*")
_LOCAL_ADDRESSES = ("", "local")  # as hosts.factory: such a host is the local demo host, unit_path unused


def unit_path_problem(path: str) -> str | None:
    """Why `path` cannot be the unit file's path on an SSH host (the remote commands take only absolute,
    plain paths, see hosts/commands.valid_path), or None when it can."""
    if not path.startswith("/"):
        return "must be an absolute path (starting with /)"
    if not _REMOTE_PATH.fullmatch(path):
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
    example = f'write unit_path = "/etc/systemd/system/{host.unit}"' if _REMOTE_PATH.fullmatch("/" + host.unit) else \
        'write unit_path = "/etc/systemd/system/sglang.service"'
    if host.unit_path is not None:
        problem = unit_path_problem(host.unit_path)
        return ("unit_path", f"{problem} (got {_toml(host.unit_path)}); {example}") if problem else None
    problem = unit_path_problem(host.resolved_unit_path)
    if problem is None:
        return None
    return ("unit", f"the unit file path it gives, {_toml(host.resolved_unit_path)}, is not usable: {problem}; "
                    'name the unit with letters, digits and :_.-@ only, or set unit_path to the file\'s path')


def _url(value: str) -> str | None:
    return None if re.match(r"https?://[^/\s]+", value) else 'must be an http(s) URL such as "http://127.0.0.1:30000"'


def _env_name(value: str) -> str | None:
    return None if _ENV_NAME.fullmatch(value) else "must be the NAME of an environment variable (letters, digits, _), not the key itself"


def _concurrency(value: tuple[int, ...]) -> str | None:
    if not value:
        return "must list at least one level, e.g. [1, 4, 16, 32, 64]"
    if any(level < 1 for level in value):
        return "every level must be a positive number of parallel requests, e.g. [1, 4, 16, 32, 64]"
    if len(set(value)) != len(value):
        return "lists a level twice; give each concurrency level once"
    return None


_RULES: dict[str, Callable[[Any], str | None]] = {
    "port": _port,
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
    "journal_lines": _positive,
}


def _toml(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    try:
        return tomlkit.item(value).as_string()
    except Exception:
        return repr(value)


def _describe(hint: Any) -> str:
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
        return "a list of whole numbers"
    if origin is dict:
        return "a table of quoted strings"
    if origin is typing.Literal:
        return "one of " + ", ".join(_toml(a) for a in args)
    return "a value"


class _Bad(Exception):
    """A value that does not fit; the reader adds file, line and key."""


def _convert(value: Any, hint: Any) -> Any:
    """The TOML value as the field's type, or `_Bad` saying what was expected."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _convert(value, inner[0])
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
    elif origin is tuple:
        if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
    elif origin is dict:
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return dict(value)
    elif origin is typing.Literal:
        if value in args:
            return value
    raise _Bad(f"expected {_describe(hint)}, got {_toml(value)}")


class _ConfigReader:
    """Walks the unwrapped TOML data; knows the text so errors can name their line."""

    TOP_KEYS = ("schema_version", "default_host", "default_profile", "hosts", "profiles", "ui")

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def fail(self, path: tuple[str, ...], what: str) -> ConfigError:
        return ConfigError(self.source, _find_line(self.text, path), ".".join(path), what)

    def read(self, data: dict[str, Any]) -> Config:
        self.check_keys(data, (), self.TOP_KEYS)
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.fail(("schema_version",), f"expected a whole number, got {_toml(version)}; write schema_version = {SCHEMA_VERSION}")
        if version < 1:
            raise self.fail(("schema_version",), f"schema_version {version} does not exist (versions start at 1); "
                                                 f"write schema_version = {SCHEMA_VERSION}")
        if version > SCHEMA_VERSION:
            raise self.fail(
                ("schema_version",),
                f"this file is schema_version {version}, written by a newer specdec-tui; this version reads "
                f"schema_version {SCHEMA_VERSION}: upgrade specdec-tui or use an older config",
            )
        hosts = {
            name: self.read_dataclass(HostConfig, table, ("hosts", name), name=name)
            for name, table in self.tables(data, "hosts").items()
        }
        for name, host in hosts.items():
            bad = check_unit_path(host)
            if bad is not None:
                raise self.fail(("hosts", name, bad[0]), bad[1])
        profiles: dict[str, BenchProfile] = {"default": BenchProfile()}
        for name, table in self.tables(data, "profiles").items():
            profiles[name] = self.read_profile(table, name)
        ui_table = data.get("ui", {})
        if not isinstance(ui_table, dict):
            raise self.fail(("ui",), "must be a table: write a [ui] section")
        ui = self.read_dataclass(UIConfig, ui_table, ("ui",))
        default_host = self.optional_str(data, "default_host")
        if default_host is not None and default_host not in hosts:
            raise self.fail(("default_host",), self.no_such("host", default_host, hosts))
        default_profile = self.optional_str(data, "default_profile") or "default"
        if default_profile not in profiles:
            raise self.fail(("default_profile",), self.no_such("profile", default_profile, profiles))
        return Config(
            hosts=hosts,
            profiles=profiles,
            ui=ui,
            default_host=default_host,
            default_profile=default_profile,
            source=self.source,
        )

    def no_such(self, what: str, name: str, known: dict[str, Any]) -> str:
        choices = ", ".join(f'"{k}"' for k in known) or f"none defined; add a [{what}s.{name}] table"
        return f'names no {what} "{name}"; defined: {choices}'

    def optional_str(self, data: dict[str, Any], key: str) -> str | None:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail((key,), f'expected a quoted string, got {_toml(value)}; write {key} = "name"')
        return value

    def tables(self, data: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
        section = data.get(key, {})
        if not isinstance(section, dict):
            raise self.fail((key,), f"must be tables, one per name: write [{key}.NAME] sections")
        for name, table in section.items():
            if not isinstance(table, dict):
                raise self.fail((key, name), f"must be a table: write a [{key}.{name}] section with its settings")
        return section

    def check_keys(self, table: dict[str, Any], path: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        for key in table:
            if key in allowed:
                continue
            if _SECRET_KEY.fullmatch(key.lower()):
                raise self.fail(
                    path + (key,),
                    "an API key or secret never goes in the config file; put it in an environment variable "
                    'and name that variable here instead: api_key_env = "SGLANG_API_KEY"',
                )
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise self.fail(path + (key,), f"unknown setting; {hint}allowed here: {', '.join(allowed)}")

    def read_dataclass(self, cls: type, table: dict[str, Any], path: tuple[str, ...], **fixed: Any) -> Any:
        hints = typing.get_type_hints(cls)
        allowed = tuple(f.name for f in dataclass_fields(cls) if f.name not in fixed)
        self.check_keys(table, path, allowed)
        values: dict[str, Any] = dict(fixed)
        defaults = {f.name: f.default for f in dataclass_fields(cls)}
        for key, raw in table.items():
            if isinstance(raw, dict) and typing.get_origin(hints[key]) is dict:
                self.check_string_table(raw, path + (key,))
            try:
                value = _convert(raw, hints[key])
            except _Bad as bad:
                example = _EXAMPLES.get(key, defaults.get(key))
                sample = f"; write {key} = {_toml(example)}" if example not in (None, MISSING) else ""
                raise self.fail(path + (key,), f"{bad}{sample}") from None
            rule = _RULES.get(key)
            problem = rule(value) if rule else None
            if problem:
                raise self.fail(path + (key,), f"{problem} (got {_toml(value)})")
            values[key] = value
        return cls(**values)

    def check_string_table(self, table: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, value in table.items():
            if not isinstance(value, str):
                raise self.fail(path + (key,), f'expected a quoted string, got {_toml(value)}; write {key} = "ctrl+q"')

    def read_profile(self, table: dict[str, Any], name: str) -> BenchProfile:
        path = ("profiles", name)
        if "requests" in table and "duration_s" in table:
            raise self.fail(
                path + ("duration_s",),
                "give exactly one of requests (measured requests per level) or duration_s (seconds per level), not both",
            )
        profile = self.read_dataclass(BenchProfile, table, path, name=name)
        if "duration_s" in table:
            profile = replace(profile, requests=None)
        return profile
