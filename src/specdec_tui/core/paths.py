"""Where specdec-tui keeps its files (platformdirs), in one place so tests can redirect them."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_path, user_config_path, user_data_path

APP_NAME = "specdec-tui"


def config_dir() -> Path:
    return Path(os.environ.get("SPECDEC_TUI_CONFIG_DIR") or user_config_path(APP_NAME))


def data_dir() -> Path:
    """Sessions, drafts and the demo workspace live here; SPECDEC_TUI_DATA_DIR overrides."""
    return Path(os.environ.get("SPECDEC_TUI_DATA_DIR") or user_data_path(APP_NAME))


def default_config_file() -> Path:
    return config_dir() / "config.toml"


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def drafts_dir() -> Path:
    return data_dir() / "drafts"


def demo_dir() -> Path:
    return data_dir() / "demo"


def schema_cache_dir() -> Path:
    """SGLang flag schemas learned from hosts, one file per release (SPECDEC_TUI_CACHE_DIR overrides)."""
    return Path(os.environ.get("SPECDEC_TUI_CACHE_DIR") or user_cache_path(APP_NAME)) / "sglang-schemas"
