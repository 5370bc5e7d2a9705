"""The config file: where it is, loading and parsing it into a `Config`, and saving the UI theme back
without touching the rest of the file. A bad file is reported as one `ConfigError` naming file, line and key.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from specdec_tui.core.config import SCHEMA_VERSION, Config
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_reader import ConfigReader
from specdec_tui.core.config_toml_keys import key_at_line, scan_keys
from specdec_tui.core.regular_file import read_regular_text

CONFIG_ENV_VAR = "SPECDEC_TUI_CONFIG"


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


# A config of 50 hosts is some 20 KB: a file far past that is not a config (and would be read whole).
CONFIG_MAX_BYTES = 16 * 1024 * 1024


def load_config(path: Path | str | None) -> Config:
    """No path → the defaults. A path that names no file is an error (the user asked for it)."""
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = read_regular_text(path, max_bytes=CONFIG_MAX_BYTES)
    except FileNotFoundError:
        raise ConfigError(str(path), None, "", "no such file; copy config.example.toml there or drop --config") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(str(path), None, "", f"cannot read the file ({err})") from None
    return parse_config(text, str(path))


def parse_config(text: str, source: str = "<config>") -> Config:
    """Parses and validates config TOML; raises one `ConfigError` for the first mistake."""
    import tomlkit  # here, not at import: a start without a config file never needs it
    from tomlkit.exceptions import ParseError

    try:
        data = tomlkit.parse(text).unwrap()
    except ParseError as err:
        what = re.sub(r"\s+at line \d+ col \d+$", "", str(err))
        key, hint = syntax_error_key(text, err.line)
        raise ConfigError(source, err.line, key, hint or f"TOML syntax error: {what} (column {err.col})") from None
    return ConfigReader(text, source).read(data)


def syntax_error_key(text: str, line: int) -> tuple[str, str]:
    """What a TOML syntax error on `line` names: that line's own key or table header (as written when it does
    not parse, e.g. an unclosed `[hosts.gpu`, with a hint in words); an earlier line's key only for a line that
    defines none (a continuation)."""
    own = dict(scan_keys(text)).get(line)
    if own is not None:
        return ".".join(own), ""
    lines = text.splitlines()
    written = lines[line - 1].split("#", 1)[0].strip() if 0 < line <= len(lines) else ""
    if written.startswith("[") and not written.endswith("]"):
        closed = written + ("]]" if written.startswith("[[") else "]")
        return written, f"TOML syntax error: the table header is not closed; write {closed}"
    return key_at_line(text, line), ""


def save_ui_theme(path: Path | str, theme: str) -> None:
    """Rewrites only `ui.theme`, keeping every comment and the rest of the file as written."""
    import tomlkit
    from tomlkit.exceptions import ParseError

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
