"""Comparing trials and exporting a session: the numbers a person pastes into a ticket."""

from __future__ import annotations

import csv
import io
import json

import pytest

from specdec_tui.core.compare import (
    best_by_concurrency,
    compare_trials,
    delta_pct,
    flag_diff,
    summary_rows,
)
from specdec_tui.core.session_export import export_session, to_csv, to_json, to_markdown
from tests.test_session import make_session


def test_delta_pct() -> None:
    assert delta_pct(123.0, 186.0) == pytest.approx(51.22, abs=0.01)
    assert delta_pct(None, 1.0) is None
    assert delta_pct(0.0, 1.0) is None


def test_flag_diff_names_changed_added_and_removed_flags() -> None:
    diffs = flag_diff({"speculative-num-steps": "2", "tp": "4", "enable-metrics": None},
                      {"speculative-num-steps": "3", "tp": "4", "cuda-graph-max-bs": "32"})
    described = [d.describe() for d in diffs]
    assert described == [
        "--speculative-num-steps: 2 → 3",
        "--enable-metrics: (switch) → (absent)",
        "--cuda-graph-max-bs: (absent) → 32",
    ]


def test_compare_two_trials_side_by_side() -> None:
    session = make_session()
    cmp = compare_trials(session.trials[0], session.trials[2])
    assert [lv.concurrency for lv in cmp.levels] == [1, 64]
    assert cmp.levels[0].tok_s_delta_pct == pytest.approx((234 - 123) / 123 * 100)
    assert cmp.max_running_requests == (26, 17)
    assert [d.name for d in cmp.flags] == ["speculative-num-steps"]


def test_summary_and_best() -> None:
    session = make_session()
    rows = summary_rows(session)
    assert [r.tok_s[1] for r in rows] == [123.0, 186.0, 234.0]
    assert [r.max_running_requests for r in rows] == [26, 21, 17]
    assert best_by_concurrency(session, 1).id == 3
    session.trials[2].status = "failed"
    assert best_by_concurrency(session, 1).id == 2


def test_csv_parses_back_row_per_trial_and_level() -> None:
    session = make_session()
    rows = list(csv.DictReader(io.StringIO(to_csv(session))))
    assert len(rows) == 6
    first = rows[0]
    assert (first["trial"], first["concurrency"], float(first["output_tok_s"])) == ("1", "1", 123.0)
    assert first["max_running_requests"] == "26"
    assert "--speculative-num-steps 1" in first["flags"]


def test_json_parses_back_with_every_trial() -> None:
    data = json.loads(to_json(make_session()))
    assert [t["levels"][0]["output_tok_s"] for t in data["trials"]] == [123.0, 186.0, 234.0]
    assert data["trials"][0]["facts"]["max_running_requests"] == 26


def test_markdown_report_has_the_table_the_best_and_flag_changes() -> None:
    md = to_markdown(make_session())
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert table[0].startswith("| # | trial | status")
    assert len(table) == 2 + 3  # header, rule, one row per trial
    assert "| 234.0 |" in table[-1]
    assert "single-stream (c=1): trial 3" in md
    assert "--speculative-num-steps: 1 → 2" in md
    assert "acceptance inflated" in md


def test_unknown_format_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="use csv, json, md or html"):
        export_session(make_session(), "xlsx")  # type: ignore[arg-type]
