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
