"""Every `from specdec_tui... import name` in the code resolves, function-level imports included: those are
loaded only when a command runs, so a module moved or split can break a verb that no other check loads."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import specdec_tui

ROOTS = [Path(specdec_tui.__file__).parent, Path(__file__).parent, Path(__file__).parents[1] / "bench"]


def unresolved(path: Path) -> list[str]:
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("specdec_tui")):
            continue
        assert node.module is not None
        try:
            module = importlib.import_module(node.module)
        except ImportError as err:
            problems.append(f"{path.name}:{node.lineno}: {err}")
            continue
        for alias in node.names:
            if hasattr(module, alias.name):
                continue
            try:
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                problems.append(f"{path.name}:{node.lineno}: {node.module} has no {alias.name}")
    return problems


def test_every_specdec_import_resolves() -> None:
    files = [f for root in ROOTS for f in sorted(root.rglob("*.py")) if "__main__" not in f.name]
    assert len(files) > 100  # the walk found the code base
    problems = [p for f in files for p in unresolved(f)]
    assert not problems, "imports that fail when their code runs:\n" + "\n".join(problems)
