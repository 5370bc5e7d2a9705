"""The panel's helpers are handed what they use, not the app (issue 34): `HostActions`, `SessionSide`, `HostLink`,
`FleetFeed`, `FirstTrialWarmup` and the signal stop each name a small Protocol of the members they read, which
`SpecdecApp` satisfies (mypy checks it where the app builds them). So no module of ui/ imports ui/app.py, not even
for a type (`if TYPE_CHECKING:`): the one import cycle the panel had. Only the package's lazy door
(`ui/__init__.py`) loads the app, for `make_app`. Nor does any constructor in ui/ take an app type (Textual's
`App`, `SpecdecApp` or the classes it is built on): a helper holding the whole app calls back into all of it."""

from __future__ import annotations

import ast
from pathlib import Path

import specdec_tui.ui

UI = Path(specdec_tui.ui.__file__).parent
APP_MODULE = "specdec_tui.ui.app"
MAY_LOAD_THE_APP = {UI / "app.py", UI / "__init__.py"}
APP_TYPES = {"App", "SpecdecApp", "PanelState", "PanelActions"}  # Textual's app class and the panel's own layers


def _imports_of(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an `import`/`from ... import` names, anywhere in the file (TYPE_CHECKING blocks and
    function bodies included), with `from specdec_tui.ui import app` counted as the app module."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _constructors_taking_the_app(tree: ast.AST) -> list[tuple[int, str]]:
    """Each `__init__` parameter whose annotation names an app type (`App[None]`, `SpecdecApp`, `"App[None]"`...)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == "__init__"):
            continue
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
            if arg is None or arg.annotation is None:
                continue
            annotation = arg.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                annotation = ast.parse(annotation.value, mode="eval").body
            names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)}
            if names & APP_TYPES:
                found.append((arg.lineno, f"{arg.arg}: {ast.unparse(arg.annotation)}"))
    return found


def test_no_constructor_in_ui_takes_the_app() -> None:
    offenders = [f"{path.relative_to(UI)}:{line} __init__ takes {param}"
                 for path in sorted(UI.rglob("*.py"))
                 for line, param in _constructors_taking_the_app(ast.parse(path.read_text(), str(path)))]
    assert offenders == [], ("a ui helper's constructor takes the app (hand it a Protocol of what it uses, "
                             "or plain callables): " + "; ".join(offenders))


def test_the_scan_sees_a_constructor_taking_the_app() -> None:
    """The scan itself: the forms FleetFeed and FirstTrialWarmup had before (issue 34) are found, a Protocol is not."""
    source = ("class FleetFeed:\n    def __init__(self, app: App[None], config: Config) -> None: ...\n"
              "class Warm:\n    def __init__(self, *, app: 'textual.app.App[None]') -> None: ...\n"
              "class Side:\n    def __init__(self, app: SessionPanel) -> None: ...\n")
    assert _constructors_taking_the_app(ast.parse(source)) == [(2, "app: App[None]"),
                                                               (4, "app: 'textual.app.App[None]'")]


def test_no_ui_module_but_the_app_and_the_package_door_imports_the_app() -> None:
    offenders = [f"{path.relative_to(UI)}:{line} imports {name}"
                 for path in sorted(UI.rglob("*.py")) if path not in MAY_LOAD_THE_APP
                 for line, name in _imports_of(ast.parse(path.read_text(), str(path)))
                 if name == APP_MODULE or name.startswith(APP_MODULE + ".")]
    assert offenders == [], "a ui module imports ui/app.py (hand it a Protocol of what it uses): " + "; ".join(offenders)


def test_the_scan_sees_an_import_of_the_app_under_type_checking() -> None:
    """The scan itself: the form the cycle took before (a type-only import) is found."""
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from specdec_tui.ui.app import SpecdecApp\n"
    assert (3, APP_MODULE) in _imports_of(ast.parse(source))
    assert (1, APP_MODULE) in _imports_of(ast.parse("from specdec_tui.ui import app\n"))


def test_the_helpers_name_the_members_they_use() -> None:
    """Each helper's constructor is typed with its Protocol, not the app class."""
    from specdec_tui.ui.first_trial_warmup import FirstTrialWarmup, WarmupWorkers
    from specdec_tui.ui.fleet_feed import FeedWorkers, FleetFeed
    from specdec_tui.ui.host_actions import ActionsPanel, HostActions
    from specdec_tui.ui.host_link import HostLink, LinkWorkers
    from specdec_tui.ui.session_side import SessionPanel, SessionSide

    for helper, port in ((HostActions, ActionsPanel), (SessionSide, SessionPanel), (HostLink, LinkWorkers),
                         (FleetFeed, FeedWorkers), (FirstTrialWarmup, WarmupWorkers)):
        annotations = helper.__init__.__annotations__
        first = next(name for name in annotations if name != "return")
        assert annotations[first] == port.__name__, f"{helper.__name__} takes {annotations[first]}, not {port.__name__}"
