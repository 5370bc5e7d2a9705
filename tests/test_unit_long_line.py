"""A unit line over systemd's limit (1 MiB, LONG_LINE_MAX: "Line too long", and the unit does not load) is a
syntax error with its line number: `unit check` said "0 error(s)" of a unit holding a 30 MB comment, `host push`
pushed it, and the panel then held it at ~1 GB (a newcomer's hostile-input pass)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from specdec_tui.core.unit import UnitFile
from specdec_tui.core.unit_errors import UnitSyntaxError
from specdec_tui.core.unit_syntax import LONG_LINE_MAX
from tests.conftest import require
from tests.tmux_session import program

from .ui_helpers import OFFLINE_UNIT


def with_line(length: int, *, multibyte: bool = False) -> str:
    """The unit with a comment line of about `length` bytes (two-byte letters when `multibyte`)."""
    filler = "é" * (length // 2) if multibyte else "x" * length
    return OFFLINE_UNIT.replace("[Service]\n", f"[Service]\n# {filler}\n", 1)


def test_a_line_over_systemd_s_limit_is_a_syntax_error_with_its_number() -> None:
    number = with_line(10).splitlines().index("# " + "x" * 10) + 1
    with pytest.raises(UnitSyntaxError, match=r"over 1 MiB") as err:
        UnitFile.parse(with_line(LONG_LINE_MAX))
    assert err.value.line == number
    with pytest.raises(UnitSyntaxError, match=r"over 1 MiB"):  # counted in bytes, as systemd reads it
        UnitFile.parse(with_line(LONG_LINE_MAX + 10, multibyte=True))  # fewer characters than the limit
    UnitFile.parse(with_line(LONG_LINE_MAX - 100))  # under it: read as before


def test_unit_check_refuses_it_in_words(tmp_path: Path) -> None:
    unit = tmp_path / "sglang.service"
    unit.write_text(with_line(2 * LONG_LINE_MAX))
    done = subprocess.run([*program(), "unit", "check", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert "over 1 MiB" in done.stdout + done.stderr, (done.stdout[-500:], done.stderr[-500:])


def with_joined(total: int, *, comment: int = 5000) -> str:
    """A unit whose ExecStart= joins continuation lines of `total` bytes (the contents systemd joins: comment
    lines inside the continuation left out, as systemd leaves them), no single line near the limit."""
    head = "[Unit]\nDescription=joined\n[Service]\nType=simple\n"
    first, middle = "ExecStart=/bin/true \\", "  " + "x" * 1000 + " \\"
    count = (total - len(first)) // len(middle) - 1
    body = [first, *[middle] * count, "# " + "c" * comment]
    body.append("y" * (total - sum(len(line) for line in body[:-1])))
    return head + "\n".join(body) + "\n"


def test_continuation_lines_joined_over_systemd_s_limit_are_a_syntax_error_where_they_cross_it() -> None:
    with pytest.raises(UnitSyntaxError, match=r"ExecStart= at line 5 and its continuation lines join into .* over 1 MiB") as err:
        UnitFile.parse(with_joined(LONG_LINE_MAX + 1))
    assert err.value.line == with_joined(LONG_LINE_MAX + 1).count("\n")  # the last line crosses it
    assert "1,048,577 bytes" in str(err.value)
    UnitFile.parse(with_joined(LONG_LINE_MAX))  # exactly the limit: systemd loads it (the comment not counted)


def test_the_joined_limit_is_the_real_systemds(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    require(analyze is not None, "systemd-analyze is not installed")
    assert analyze is not None
    for total in (LONG_LINE_MAX, LONG_LINE_MAX + 1):
        path = tmp_path / f"joined{total}.service"
        path.write_text(with_joined(total))
        result = subprocess.run([analyze, "verify", "--man=no", str(path)], capture_output=True, text=True,
                                timeout=60, cwd=tmp_path)
        loaded = "failed to load" not in result.stdout + result.stderr
        try:
            UnitFile.parse(with_joined(total))
            ours = True
        except UnitSyntaxError:
            ours = False
        assert loaded == ours, (total, result.stdout[-300:], result.stderr[-300:])


def test_unit_check_refuses_joined_lines_in_words(tmp_path: Path) -> None:
    unit = tmp_path / "sglang.service"
    unit.write_text(with_joined(2 * LONG_LINE_MAX))
    done = subprocess.run([*program(), "unit", "check", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert "Continuation line too long" in done.stdout + done.stderr, (done.stdout[-500:], done.stderr[-500:])
