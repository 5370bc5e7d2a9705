"""Old CUDA-graph flags reach the user the same way everywhere: `unit check` names the rewrite, and the panel's `f`
performs it (both through core.flags.apply_fix).

# upstream 0.5.23: --cuda-graph-max-bs is gone (argparse: an ambiguous prefix, exit 2; earlier releases stored it
#   into cuda_graph_max_bs_decode); --disable-cuda-graph is a DeprecatedStoreTrueAction (server_args.py,
#   arg_groups/argparse_actions.py: the warning text)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.unit import UnitFile
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import offline_app, started, wait_for

SEED = Path(__file__).parent / "data" / "units" / "sglang-qwen.service"
REFUSAL = ("SGLang 0.5.23 refuses the command line (exit 2): ambiguous option: --cuda-graph-max-bs could match "
           "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill")


def test_unit_check_names_sglangs_warning_and_the_rewrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unit = tmp_path / "old.service"
    unit.write_text(SEED.read_text().replace("--port 30000", "--port 30000 \\\n    --cuda-graph-max-bs 64"))
    assert main(["unit", "check", str(unit)]) == 1  # 0.5.23 stops at argument parsing (it was a warning)
    out = capsys.readouterr().out
    assert REFUSAL in out
    assert "(fix: --cuda-graph-max-bs-decode 64, remove --cuda-graph-max-bs)" in out


async def test_f_in_the_panel_rewrites_the_deprecated_flag() -> None:
    app = offline_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        editor = app.screen.query_one(UnitEditor)
        editor.text = editor.text.replace("--enable-metrics", "--enable-metrics \\\n    --disable-cuda-graph")
        await wait_for(pilot, lambda: app.config_pane.first_fix() is not None, "the deprecation to be offered")
        app.set_focus(None)  # `f` is the panel's key, not a character for a field
        await pilot.press("f")
        await wait_for(pilot, lambda: "--disable-cuda-graph" not in app.config_pane.text, "the fix")
        flags = UnitFile.parse(app.config_pane.text).flags()
        assert flags["cuda-graph-backend-decode"] == "disabled" and flags["cuda-graph-backend-prefill"] == "disabled"
        assert app.config_pane.first_fix() is None
