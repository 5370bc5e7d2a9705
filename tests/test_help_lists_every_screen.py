"""Every key binding shows on the help screen: each screen class in ui/screens that declares BINDINGS has them
among the help screen's scopes (a new screen whose keys were never listed failed only a person reading help)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.screen import Screen

import specdec_tui.ui.screens as screens_pkg
from specdec_tui.core.config import Config
from specdec_tui.core.session import Session
from specdec_tui.ui.app import make_app


def test_every_screen_with_keys_is_on_the_help_screen() -> None:
    app = make_app(Config(), None, Session(host="offline"), session_path=None)
    listed = [id(bindings) for bindings in app.binding_scopes().values()]
    missing = []
    for info in pkgutil.iter_modules(screens_pkg.__path__):
        module = importlib.import_module(f"{screens_pkg.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, Screen) and cls.__module__ == module.__name__ and cls.__dict__.get("BINDINGS")
                    and id(cls.__dict__["BINDINGS"]) not in listed):
                missing.append(f"{info.name}.{name}")
    assert missing == [], f"screens whose keys the help screen does not list: {missing}"


def test_keys_sharing_a_line_of_help_say_different_things() -> None:
    """Two bindings on one key in one place (escape: cancel, and cancel-bench while a bench runs) each say what they
    do: the help once read "esc, c  Cancel" and "esc  Cancel bench", one line repeating the other."""
    app = make_app(Config(), None, Session(host="offline"), session_path=None)
    rows = app.help_rows()
    repeated = []
    for i, row in enumerate(rows):
        for other in rows[i + 1:]:
            shared = {key.strip() for key in row.keys.split(",")} & {key.strip() for key in other.keys.split(",")}
            first, second = row.description.lower(), other.description.lower()
            if row.scope == other.scope and shared and (first in second or second in first):
                repeated.append((row.keys, row.description, other.keys, other.description))
    assert repeated == [], f"lines of help on one key that say the same: {repeated}"
