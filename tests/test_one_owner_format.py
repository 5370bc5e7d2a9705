"""One owner for how numbers are written and which colour a status is (issue 34): `core.number_format` and
`core.status_tone`, used by the panel, the headless commands and the exported reports. Before, four modules had
their own number rules and three their own status colours (a cancelled trial yellow in `session show`, dim in the
panel)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import specdec_tui
from specdec_tui.cli.render import session_table, status_text
from specdec_tui.core.report_html import session_html
from specdec_tui.core.session import Session, Trial
from specdec_tui.core.status_tone import Tone, delta_tone, rich_style, status_tone

PACKAGE = Path(specdec_tui.__file__).parent
VIEWS = [*sorted((PACKAGE / "ui").rglob("*.py")), *sorted((PACKAGE / "cli").rglob("*.py")),
         PACKAGE / "core" / "report_html.py", PACKAGE / "core" / "session_export.py", PACKAGE / "core" / "report_charts.py"]
FORMATTER_NAMES = {"num", "pct", "_num", "_fmt", "_pct", "_f", "fmt_num", "fmt_fixed", "fmt_int", "fmt_ms", "fmt_pct",
                   "fmt_delta", "fmt_mib"}
COLOUR = re.compile(r"\b(green|red|yellow|cyan|dim|magenta|success|error|warning|muted|accent)\b|--")
STATUS_WORDS = {"ok", "failed", "cancelled", "running", "pending", "skipped"}


def test_no_view_defines_a_number_formatter_of_its_own() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}" for path in VIEWS
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)
             and node.name in FORMATTER_NAMES]
    assert found == [], "format numbers with core.number_format: " + "; ".join(found)


def test_no_view_maps_statuses_to_colours_of_its_own() -> None:
    """A dict literal from trial statuses to colours or style names (the three there were): core.status_tone's."""
    found = []
    for path in VIEWS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                styles = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                          and len(v.value) < 30 and COLOUR.search(v.value)]
                if len(keys & STATUS_WORDS) >= 2 and styles:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == [], "a status's colour is core.status_tone's: " + "; ".join(found)


def _trial(id_: int, status: str) -> Trial:
    return Trial(id=id_, unit_text="", flags={"speculative-num-steps": str(id_)}, status=status)  # type: ignore[arg-type]


def test_the_cli_and_the_report_show_each_status_in_its_tone() -> None:
    statuses = ["ok", "failed", "cancelled", "running"]
    session = Session(host="h", unit="u", trials=[_trial(i + 1, s) for i, s in enumerate(statuses)])
    html = session_html(session)
    for status in statuses:
        tone = status_tone(status)
        assert status_text(status) == f"[{rich_style(tone)}]{status}[/]"
        assert f'class="tone-{tone.value}' in html
    assert status_tone("cancelled") is status_tone("pending") is Tone.MUTED  # the panel's sweep and the CLI agree now
    assert session_table(session).row_count == len(statuses)


def test_a_change_is_judged_once() -> None:
    assert delta_tone(5.0) is Tone.GOOD and delta_tone(5.0, higher_is_better=False) is Tone.BAD
    assert delta_tone(0.5) is None and delta_tone(None) is None
