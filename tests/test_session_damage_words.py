"""A damaged session file is said in words about the file (which part, what to do), never in Python's: an
attacker's pass found "malformed trial (AttributeError: 'str' object has no attribute 'get')", "not valid TOML:
maximum recursion depth exceeded" and "…use sys.set_int_max_str_digits()" from `specdec-tui session show`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAD = 'schema_version = 1\nhost = "h"\nunit = "u.service"\n'
PYTHON_WORDS = ("Error", "object has no attribute", "recursion", "sys.", "set_int_max_str_digits", "Traceback", "int()")


def shown(tmp_path: Path, text: str) -> str:
    """What `specdec-tui session show FILE` says of `text` (it must refuse it: exit 1, nothing on stdout)."""
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "specdec_tui", "session", "show", str(path)], capture_output=True,
                          text=True, timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and not done.stdout, (done.stdout, done.stderr)
    assert not any(word in done.stderr for word in PYTHON_WORDS), done.stderr
    assert "restore it from a backup" in done.stderr, done.stderr
    return done.stderr


@pytest.mark.parametrize(("level", "words"), [
    ('ttft_ms = "x"', "its level 1 has `ttft_ms` as a string"),
    ("workload = 3", "its level 1 has `workload` as a number"),
    ('output_tok_s = "fast"', "its level 1: output_tok_s = 'fast' is not a number"),
])
def test_a_trial_with_a_value_of_the_wrong_kind_names_the_level_and_the_key(tmp_path: Path, level: str, words: str) -> None:
    told = shown(tmp_path, HEAD + f"[[trials]]\nid = 1\n[[trials.levels]]\nconcurrency = 1\n{level}\n")
    assert "trial #1: malformed trial: " + words in told, told


@pytest.mark.parametrize(("trial", "words"), [
    ('id = 1\nflags = "x"', "its `flags` is a string"),
    ('id = "one"', "its `id` is a string, not a whole number"),
    ('status = "ok"', "it has no `id`"),
    ("id = 1\nlevels = [1]", "its level 1 is a number, not a table"),
])
def test_a_trial_with_a_part_of_the_wrong_shape_names_that_part(tmp_path: Path, trial: str, words: str) -> None:
    told = shown(tmp_path, HEAD + f"[[trials]]\n{trial}\n")
    assert "trial #1: malformed trial: " + words in told, told


def test_arrays_nested_thousands_deep_are_said_as_such(tmp_path: Path) -> None:
    told = shown(tmp_path, HEAD + "x = " + "[" * 3000 + "]" * 3000 + "\n")
    assert "s.toml: not readable: its arrays or tables are nested inside one another too deeply" in told, told


def test_a_number_of_five_thousand_digits_names_its_line(tmp_path: Path) -> None:
    told = shown(tmp_path, HEAD + "[[trials]]\nid = " + "9" * 5000 + "\n")
    assert "s.toml: not readable: line 5 holds a number 5,000 digits long" in told, told
