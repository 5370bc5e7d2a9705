"""Drafts: unpushed edits survive restarts of the panel, one per host and unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core import drafts


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPECDEC_TUI_DATA_DIR", str(tmp_path))
    return tmp_path


def test_round_trip_keeps_exact_text() -> None:
    text = "[Service]\nExecStart=/bin/sglang --speculative-num-steps 4 \\\n  --x 1\n\n"
    drafts.save_draft("llm-two", "sglang.service", text)
    assert drafts.load_draft("llm-two", "sglang.service") == text


def test_missing_draft_is_none() -> None:
    assert drafts.load_draft("nowhere", "sglang.service") is None


def test_drafts_are_per_host_and_unit() -> None:
    drafts.save_draft("a", "u.service", "A")
    drafts.save_draft("b", "u.service", "B")
    drafts.save_draft("a", "v.service", "AV")
    assert drafts.load_draft("a", "u.service") == "A"
    assert drafts.load_draft("b", "u.service") == "B"
    assert drafts.load_draft("a", "v.service") == "AV"


def test_newer_save_replaces_and_clear_forgets(data_dir: Path) -> None:
    drafts.save_draft("a", "u.service", "old")
    drafts.save_draft("a", "u.service", "new")
    assert drafts.load_draft("a", "u.service") == "new"
    drafts.clear_draft("a", "u.service")
    drafts.clear_draft("a", "u.service")  # clearing twice is fine
    assert drafts.load_draft("a", "u.service") is None
    assert not [p for p in (data_dir / "drafts").iterdir()]  # no temp files left behind


def test_hostile_names_stay_inside_drafts_dir(data_dir: Path) -> None:
    path = drafts.save_draft("../../etc", "../passwd", "x")
    assert path.parent == data_dir / "drafts"
    assert drafts.load_draft("../../etc", "../passwd") == "x"
