"""Shared fixtures: every test gets private config/data dirs so nothing touches the user's files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The real sshd + systemd test host (tests/hostlab): session-scoped fixtures `hostlab`, `lab_service`, ...
pytest_plugins = ["tests.hostlab.fixtures"]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(autouse=True)
def private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path_factory.mktemp("specdec-home")
    monkeypatch.setenv("SPECDEC_TUI_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("SPECDEC_TUI_CONFIG_DIR", str(root / "config"))
    monkeypatch.delenv("SPECDEC_TUI_CONFIG", raising=False)
    return root


def require(condition: bool, reason: str) -> None:
    """Skip when a system facility is missing — but in CI (CI=true) a missing facility is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI requires it: {reason}")
    pytest.skip(reason)
