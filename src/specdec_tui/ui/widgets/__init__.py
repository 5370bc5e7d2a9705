"""Display widgets composed by the app shell (one widget a file; each documents its API in its docstring).

The names below are loaded on first use (PEP 562), not with the package: a screen importing one widget's
module must not pay for every other widget (the chart alone pulls in plotext) before its first frame.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from specdec_tui.ui.widgets.bench_table import BenchTable
    from specdec_tui.ui.widgets.health_pane import HealthPane
    from specdec_tui.ui.widgets.journal_pane import JournalPane
    from specdec_tui.ui.widgets.tok_chart import TokChart
    from specdec_tui.ui.widgets.trials_list import TrialsList

_MODULE_OF = {
    "BenchTable": "bench_table",
    "HealthPane": "health_pane",
    "JournalPane": "journal_pane",
    "TokChart": "tok_chart",
    "TrialsList": "trials_list",
}

__all__ = ["BenchTable", "HealthPane", "JournalPane", "TokChart", "TrialsList"]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
