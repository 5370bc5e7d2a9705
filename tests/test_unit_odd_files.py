"""Odd unit files and interrupted saves (issue 36, tracebacks and "Also:"), through the commands a user runs:
`unit set F 'a"b=1'` is refused in words; `unit set --in-place` on a symlink edits the file it points to and keeps
the link; a unit with a UTF-8 byte order mark reads as systemd reads it (and keeps the mark); several ExecStart=
in a Type=simple unit are flagged with their lines; a save killed before its rename leaves a temp file that the
next save removes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.cli.main import main
from specdec_tui.core.session import Session, save_session
from tests.ui_helpers import OFFLINE_UNIT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def unit(tmp_path: Path) -> Path:
    path = tmp_path / "sglang.service"
    path.write_text(OFFLINE_UNIT)
    return path


def test_a_flag_name_with_a_quote_is_refused_in_words(unit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "unit", "set", str(unit), 'a"b=1')
    assert code == 1 and out == ""
    assert "'a\"b' is not a flag name" in err
    assert unit.read_text() == OFFLINE_UNIT


def test_set_in_place_on_a_symlink_edits_its_target(unit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "link.service"
    link.symlink_to(unit)
    code, _, err = run(capsys, "unit", "set", "--in-place", str(link), "speculative-num-steps=4")
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == unit
    assert "--speculative-num-steps 4" in unit.read_text()


def test_a_byte_order_mark_is_read_as_systemd_reads_it_and_kept(unit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unit.write_bytes(b"\xef\xbb\xbf" + OFFLINE_UNIT.encode())
    code, out, err = run(capsys, "unit", "show", str(unit))
    assert code == 0, err
    assert "--speculative-num-steps" in out
    code, _, err = run(capsys, "unit", "set", "--in-place", str(unit), "speculative-num-steps=4")
    assert code == 0, err
    assert unit.read_bytes().startswith(b"\xef\xbb\xbf[Unit]\n") and b"--speculative-num-steps 4" in unit.read_bytes()


def test_several_exec_start_in_a_simple_service_are_flagged(unit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = OFFLINE_UNIT.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("ExecStart="))
    unit.write_text("".join([*lines[:first], "ExecStart=/usr/bin/true\n", *lines[first:]]))
    for argv in (("unit", "check", str(unit)), ("unit", "show", str(unit))):
        code, _, err = run(capsys, *argv)
        assert code == 1, argv
        assert f"ExecStart= is set 2 times (lines {first + 1}, {first + 2})" in err
        assert "Type=simple service: systemd refuses to start it" in err
    unit.write_text(OFFLINE_UNIT.replace("Type=simple", "Type=oneshot").replace("ExecStart=", "ExecStart=/usr/bin/true\nExecStart=", 1))
    assert run(capsys, "unit", "show", str(unit))[0] == 0  # oneshot may have several


KILLED_SAVE = """
import os, signal, sys
from specdec_tui.core.session import Session, save_session
os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # killed after the temp file, before the rename
save_session(Session(host="h"), sys.argv[1])
"""


def test_a_save_killed_before_its_rename_leaves_a_temp_file_the_next_save_removes(tmp_path: Path) -> None:
    path = tmp_path / "session.toml"
    killed = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(path)], capture_output=True, timeout=60)
    assert killed.returncode == -9
    temp = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # beside the writers' lock file
    assert len(temp) == 1 and temp[0].startswith(".session.toml."), temp
    assert not path.exists()

    save_session(Session(host="h"), path)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert "session.toml" in [p.name for p in tmp_path.iterdir()]
    os.stat(path)
