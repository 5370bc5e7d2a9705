"""Display widgets composed by the app shell (one widget a file; each documents its API in its docstring)."""

from __future__ import annotations

from specdec_tui.ui.widgets.journal_pane import JournalPane

__all__ = ["JournalPane"]
