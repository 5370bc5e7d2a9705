"""`specdec-tui unit ...` as a user runs it: real files, the real entry point, exit codes and words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.cli.main import main

UNITS = Path(__file__).parent / "data" / "units"
SEED = UNITS / "sglang-qwen.service"
CRLF = UNITS / "sglang-eagle3-crlf.service"


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "specdec_tui.cli.main", *args], capture_output=True, timeout=60)


def test_set_prints_the_unit_with_only_the_flag_lines_changed() -> None:
    result = run_cli("unit", "set", str(CRLF), "--speculative-num-steps=4", "speculative-num-draft-tokens=24")
    assert result.returncode == 0, result.stderr
    original = CRLF.read_bytes()
    expected = original.replace(b"--speculative-num-steps 5 ", b"--speculative-num-steps 4 ").replace(
        b"--speculative-num-draft-tokens 32 ", b"--speculative-num-draft-tokens 24 ")
    assert result.stdout == expected


def test_set_switch_unset_and_output_file(tmp_path: Path) -> None:
    out = tmp_path / "edited.service"
    code = main(["unit", "set", str(SEED), "enable-metrics", "--unset", "--port", "-o", str(out)])
    assert code == 0
    text = out.read_text()
    assert "    --host 0.0.0.0 \\\n    --enable-metrics\nRestart=" in text
    assert "--port" not in text


def test_set_in_place_rewrites_the_file(tmp_path: Path) -> None:
    target = tmp_path / "sglang-qwen.service"
    target.write_bytes(SEED.read_bytes())
    target.chmod(0o640)
    assert main(["unit", "set", str(target), "mem-fraction-static=0.8", "--in-place"]) == 0
    assert target.read_text() == SEED.read_text().replace("static 0.85", "static 0.8")
    assert target.stat().st_mode & 0o777 == 0o640


def test_set_warns_on_stderr_about_what_sglang_will_do(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["unit", "set", str(SEED), "speculative-num-steps=4", "-o", str(tmp_path / "x")])
    assert "overrides --speculative-num-draft-tokens 4 with 5" in capsys.readouterr().err


def test_set_without_changes_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unit", "set", str(SEED)]) == 1
    assert "nothing to change" in capsys.readouterr().err


def test_show_json_lists_program_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unit", "show", str(SEED), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["python_module"] == "sglang.launch_server"
    assert data["flags"]["speculative-num-steps"] == "3"
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in data["environment"]


def test_show_table_names_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unit", "show", str(SEED)]) == 0
    out = capsys.readouterr().out
    assert "sglang.launch_server" in out and "--speculative-algorithm" in out and "NEXTN" in out


def test_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unit", "check", str(SEED)]) == 0
    assert "no problems found" in capsys.readouterr().out
    bad = tmp_path / "bad.service"
    # 0.5.23's parser takes --mem-fraction-static 1.5 (no start-up check refuses it); a word for a number it refuses
    bad.write_text(SEED.read_text().replace("--mem-fraction-static 0.85", "--mem-fraction-static most"))
    assert main(["unit", "check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert ("error: SGLang 0.5.23 refuses the command line (exit 2): argument --mem-fraction-static: invalid float "
            "value: 'most'") in out and "1 error(s)" in out


def test_bad_files_are_reported_in_words_with_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.service"
    broken.write_text("[Service]\nExecStart=/bin/python -m sglang.launch_server \\\n  --served-model-name \"oops\n")
    assert main(["unit", "check", str(broken)]) == 1
    err = capsys.readouterr().err
    assert "line 3" in err and "unterminated double quote" in err and "Traceback" not in err
    assert main(["unit", "show", str(tmp_path / "missing.service")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_diff_shows_the_line_and_the_flag_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "new.service"
    new.write_text(SEED.read_text().replace("steps 3", "steps 4"))
    assert main(["unit", "diff", str(SEED), str(new)]) == 0
    out = capsys.readouterr().out
    assert "-    --speculative-num-steps 3 \\\n+    --speculative-num-steps 4 \\\n" in out
    assert "# --speculative-num-steps: 3 -> 4" in out


@pytest.mark.parametrize("value", ["abc", "2.5"])  # both refused by 0.5.23's parser (it takes 0: not an error)
def test_set_refuses_an_edit_that_adds_an_error_and_leaves_the_file(tmp_path: Path, value: str) -> None:
    """Issue 35 (11): `unit set speculative-num-steps=abc` printed `error:`, exited 0 and wrote the file."""
    target = tmp_path / "sglang-qwen.service"
    target.write_bytes(SEED.read_bytes())
    result = run_cli("unit", "set", str(target), f"speculative-num-steps={value}", "--in-place")
    assert result.returncode != 0
    assert target.read_bytes() == SEED.read_bytes()
    err = result.stderr.decode()
    assert "--speculative-num-steps" in err and "not written" in err
    printed = run_cli("unit", "set", str(SEED), f"speculative-num-steps={value}")
    assert printed.returncode != 0 and printed.stdout == b""
