"""The Textual UI. Only this package imports Textual; `make_app` builds the panel."""

from __future__ import annotations


def make_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Lazy re-export of `ui.app.make_app`, so importing `specdec_tui.ui` stays cheap."""
    from specdec_tui.ui.app import make_app as _make_app

    return _make_app(*args, **kwargs)
