"""Display widgets composed by the app shell (one widget a file; each documents its API in its docstring)."""

from __future__ import annotations

from specdec_tui.ui.widgets.bench_table import BenchTable
from specdec_tui.ui.widgets.health_pane import HealthPane
from specdec_tui.ui.widgets.journal_pane import JournalPane
from specdec_tui.ui.widgets.tok_chart import TokChart
from specdec_tui.ui.widgets.trials_list import TrialsList

__all__ = ["BenchTable", "HealthPane", "JournalPane", "TokChart", "TrialsList"]
