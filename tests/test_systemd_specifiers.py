"""A `%` in a flag's value is systemd's before it is SGLang's: a value that lands in the unit as typed with `%` and a
letter systemd does not know makes systemd refuse the whole ExecStart= line at the next daemon-reload (the service
then does not start), and a known one is replaced. Judged where it is typed — and the verdicts are checked against
the real systemd's own (`systemd-analyze verify`) on the same values."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from specdec_tui.core.flags import apply_fix, validate_unit
from specdec_tui.core.systemd_specifiers import literal, specifier_rules
from specdec_tui.core.unit import UnitFile
from tests.conftest import require

UNIT = ("[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --served-model-name {v}\n")
VALUES = ["plain", "50%Z", "up-%1", "%h-model", "100%%", "x%", "a%-b", "%%Z", "%i%K"]


def verdict(value: str) -> str:
    issues = [i for i in specifier_rules({"served-model-name": value})]
    return issues[0].level if issues else "none"


def test_a_value_systemd_would_refuse_is_an_error_with_the_fix_and_a_rewritten_one_a_warning() -> None:
    unit = UnitFile.parse(UNIT.format(v="50%Z"))
    issues = [i for i in validate_unit(unit) if i.flag == "served-model-name"]
    assert [i.level for i in issues] == ["error"]
    assert "systemd 252 reads %Z" in issues[0].message and "will not start" in issues[0].message
    fixed = apply_fix(unit, issues[0])
    assert fixed.flags()["served-model-name"] == "50%%Z"
    assert not [i for i in validate_unit(fixed) if i.flag == "served-model-name"]
    assert [verdict(v) for v in VALUES] == ["none", "error", "error", "warning", "none", "none", "none", "none",
                                            "error"]
    assert "systemd replaces %h" in specifier_rules({"served-model-name": "%h-model"})[0].message


def test_the_verdicts_are_the_real_systemds(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    require(analyze is not None, "systemd-analyze is not installed")
    assert analyze is not None
    for n, value in enumerate([*VALUES, literal("50%Z"), literal("%h-model")]):
        path = tmp_path / f"spec{n}.service"
        path.write_text(UNIT.format(v=value))
        result = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True, timeout=60,
                                cwd=tmp_path)
        refused = "Failed to resolve unit specifiers" in result.stderr
        assert refused == (verdict(value) == "error"), (value, result.stderr)


def test_a_variable_inside_a_value_is_a_warning_with_the_literal_fix_and_a_whole_variable_is_not() -> None:
    unit = UnitFile.parse(UNIT.format(v="team$ALPHA-v2"))
    issues = [i for i in validate_unit(unit) if i.flag == "served-model-name"]
    assert [i.level for i in issues] == ["warning"], issues
    assert "systemd replaces $ALPHA in --served-model-name's value" in issues[0].message
    assert "write $$ for a literal $" in issues[0].message
    fixed = apply_fix(unit, issues[0])
    assert fixed.flags()["served-model-name"] == "team$$ALPHA-v2"
    assert not [i for i in validate_unit(fixed) if i.flag == "served-model-name"]
    for value in ("$MODEL", "${MODEL}", "cost$$5", "cost$5", "a$"):  # one whole variable, a literal $, no name
        assert not specifier_rules({"served-model-name": value}), value
    assert [i.level for i in specifier_rules({"served-model-name": "${HOME}/m"})] == ["warning"]
    assert specifier_rules({"served-model-name": "a$$b$C"})[0].fix == {"served-model-name": "a$$b$$C"}  # $$ kept
