"""Nothing below the panel loads the panel, by string either (issue 34). `lint-imports` sees `import` statements
only; a module named in a string and loaded with `importlib.import_module`/`__import__` (as the journal's child
once loaded `ui.widgets.journal_lines:format_record`) is an upward import it cannot see. Two rules, for every file
under core, hosts, bench, sim and loop:
- no text names `specdec_tui.ui` or `specdec_tui.cli` (a string, a comment, a command line);
- every dynamic import names its module in the code itself (a literal, or an f-string whose fixed start is the
  package it loads from), and that package is at the file's own layer or below.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import specdec_tui

PACKAGE = Path(specdec_tui.__file__).parent
# Each layer and what it may load (its own and those below), as in pyproject's import-linter `layers` contract.
BELOW_UI = {
    "loop": ("loop", "hosts", "bench", "sim", "core"),
    "hosts": ("hosts", "core"),
    "bench": ("bench", "core"),
    "sim": ("sim", "core"),
    "core": ("core",),
}
UPWARD_NAME = re.compile(r"specdec_tui[./](ui|cli)\b")
LOADERS = {"import_module", "__import__", "find_spec"}


def _loader_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in LOADERS:
                calls.append(node)
    return calls


def _fixed_start(arg: ast.expr) -> str | None:
    """The module name's fixed start as written, or None when it is computed (a variable, a call)."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value)
    return None


def upward_loads(layer: str, text: str, where: str) -> list[str]:
    """What in `text` (the file `where`, of `layer`) names or loads a package above it, in words with the line."""
    found = [f"{where}:{n}: names {m.group(0)}" for n, line in enumerate(text.splitlines(), 1)
             for m in [UPWARD_NAME.search(line)] if m]
    allowed = tuple(f"specdec_tui.{below}" for below in BELOW_UI[layer])
    for call in _loader_calls(ast.parse(text)):
        start = _fixed_start(call.args[0]) if call.args else None
        if start is None:
            found.append(f"{where}:{call.lineno}: loads a module whose name is computed (name it in the code)")
        elif start.startswith("specdec_tui") and not start.startswith(allowed):
            found.append(f"{where}:{call.lineno}: loads {start!r}, above {layer}")
    return found


def test_nothing_below_the_panel_loads_the_panel_or_the_cli_by_name() -> None:
    found = [hit for layer in BELOW_UI for path in sorted((PACKAGE / layer).rglob("*.py"))
             for hit in upward_loads(layer, path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))]
    assert not found, "\n".join(found)


def test_the_scan_sees_what_lint_imports_cannot() -> None:
    """The rule the journal's child broke (`import_module(module)`, the name from its command line), and a load
    named upward in a literal."""
    computed = "import importlib\n\ndef resolve(name):\n    return importlib.import_module(name.partition(':')[0])\n"
    hits = upward_loads("loop", computed, "journal_child.py")
    assert len(hits) == 1 and "computed" in hits[0]
    named = "import importlib\nf = importlib.import_module('specdec_tui.core.x')\ng = __import__(f'specdec_tui.ui.{1}')\n"
    hits = upward_loads("loop", named, "up.py")
    assert hits == ["up.py:3: names specdec_tui.ui", "up.py:3: loads 'specdec_tui.ui.', above loop"]
