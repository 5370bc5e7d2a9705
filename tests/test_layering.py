"""The core and the IO services must not import Textual; only ui/ may (the design card's layering)."""

from __future__ import annotations

import ast
from pathlib import Path

import specdec_tui

PACKAGE = Path(specdec_tui.__file__).parent
UI_FREE = ["core", "hosts", "bench", "sim", "loop"]
NO_IO_IN_CORE = {"asyncssh", "httpx", "aiohttp", "socket", "subprocess"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
            if node.module.startswith("specdec_tui.ui"):
                names.add("specdec_tui.ui")
    return names


def files_under(entry: str) -> list[Path]:
    target = PACKAGE / entry
    if target.is_file():
        return [target]
    return sorted(target.rglob("*.py")) if target.is_dir() else []


def test_ui_free_layers_import_no_textual() -> None:
    offenders = []
    for entry in UI_FREE:
        for path in files_under(entry):
            bad = imported_modules(path) & {"textual", "textual_plotext", "specdec_tui.ui"}
            if bad:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {sorted(bad)}")
    assert not offenders, "UI-free modules import the UI:\n" + "\n".join(offenders)


def test_core_does_no_network_or_process_io() -> None:
    offenders = []
    for path in files_under("core"):
        bad = imported_modules(path) & NO_IO_IN_CORE
        if bad:
            offenders.append(f"{path.relative_to(PACKAGE)} imports {sorted(bad)}")
    assert not offenders, "core modules do IO:\n" + "\n".join(offenders)


def test_core_checked_files_exist() -> None:
    # Guards the two tests above against passing vacuously after a rename.
    assert (PACKAGE / "core" / "session.py").is_file()
    assert len(files_under("core")) >= 4
    assert (PACKAGE / "loop" / "trial.py").is_file() and len(files_under("loop")) >= 6
