"""Provenance of a unit's EnvironmentFile= (issue 33): the behaviour-changing variables it holds (read on the host at
the trial, overriding Environment= as systemd does) are recorded with the trial and shown by `session show` and
`session compare` as the unit's own are; secrets stay out; an unreadable or absent file is said so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from specdec_tui.core.provenance import env_file_paths, env_file_vars, provenance
from specdec_tui.core.session import Trial, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.trial import TrialLoop


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "specdec_tui", "session", *args], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return " ".join(out.stdout.split())  # the console may wrap a long line


def _with_env_file(unit: str, env_file: Path, missing: Path) -> str:
    lines = unit.splitlines()
    at = lines.index("[Service]") + 1
    lines[at:at] = ["Environment=SGLANG_ENABLE_SPEC_V2=0 SGLANG_MINE=unit", f"EnvironmentFile={env_file}",
                    f"EnvironmentFile=-{missing}"]
    return "\n".join(lines) + "\n"


async def test_the_env_file_read_on_the_host_is_shown_and_compared(demo_runner: TrialLoop, tmp_path: Path) -> None:
    env_file = tmp_path / "sglang.env"
    env_file.write_text('# spec v2 on\nSGLANG_ENABLE_SPEC_V2=1\nHF_TOKEN="hf_secret_value"\nCUDA_LAUNCH_BLOCKING = 0\n'
                        "PATH=/opt/bin\n")
    missing = tmp_path / "absent.env"
    text = _with_env_file(await demo_runner.read_running(), env_file, missing)
    first = await demo_runner.push_and_restart(text)
    assert first.status == "running", first.failure
    await demo_runner.bench()
    env_file.write_text("SGLANG_ENABLE_SPEC_V2=0\n")  # changed on the host between two benchmarks of one unit
    second = await demo_runner.bench()
    assert second.id != first.id and second.unit_text == first.unit_text

    saved = load_session(demo_runner.session_path)
    a, b = saved.trials[0], saved.trials[-1]
    assert a.file_env == {"SGLANG_ENABLE_SPEC_V2": "1", "CUDA_LAUNCH_BLOCKING": "0"}  # no secret, no PATH
    assert a.env_files == {str(env_file): "read", str(missing): "absent (optional)"}
    assert b.file_env == {"SGLANG_ENABLE_SPEC_V2": "0"}

    path = str(demo_runner.session_path)
    shown = _cli("show", path)
    line = shown[shown.index(f"trial {a.id} measured on:"):shown.index(f"trial {b.id} measured on:")]
    assert "SGLANG_ENABLE_SPEC_V2=1" in line and "SGLANG_MINE=unit" in line  # the file wins over Environment=
    assert f"EnvironmentFile {env_file} read" in line and f"EnvironmentFile {missing} absent (optional)" in line
    assert "hf_secret" not in shown and "HF_TOKEN" not in shown and "/opt/bin" not in shown
    compared = _cli("compare", path, str(a.id), str(b.id))
    assert "SGLANG_ENABLE_SPEC_V2: A 1, B 0" in compared and "CUDA_LAUNCH_BLOCKING: A 0, B unset" in compared
    assert compared.index("SGLANG_ENABLE_SPEC_V2") < compared.index("tok/s")  # before the numbers
    assert "hf_secret" not in demo_runner.session_path.read_text()
    html = _cli("export", path, "--format", "html")
    assert "SGLANG_ENABLE_SPEC_V2=1" in html and "EnvironmentFile" in html and "hf_secret" not in html


async def test_an_unreadable_env_file_is_recorded_as_such(demo_runner: TrialLoop, tmp_path: Path) -> None:
    text = await demo_runner.read_running()
    trial = Trial(id=9, unit_text=_with_env_file(text, tmp_path / "gone.env", tmp_path / "x.env"))
    await demo_runner.read_env_files(trial)
    assert trial.env_files[str(tmp_path / "gone.env")].startswith("not read: cannot read ")
    assert trial.file_env == {}
    assert provenance(trial)["SGLANG_ENABLE_SPEC_V2"] == "0"  # the unit's own, nothing overrode it


def test_env_file_syntax_as_systemd_reads_it() -> None:
    unit = "[Service]\nEnvironmentFile=/a.env\nEnvironmentFile=\nEnvironmentFile=-/b.env\nEnvironmentFile=/c.env\n"
    assert env_file_paths(unit) == [("/b.env", True), ("/c.env", False)]  # an empty one resets the list
    assert env_file_vars("; c\n# c\nA=1\nB='two words'\nC=\"x\"\nnot an assignment\n9X=1\nA=3\n") == {
        "A": "3", "B": "two words", "C": "x"}
    assert UnitFile.parse(unit).get_all("Service", "EnvironmentFile")  # the parser keeps them too


def test_the_local_host_runs_with_the_env_file_over_environment(tmp_path: Path) -> None:
    """What the provenance says is what the demo's supervisor gives the server: the file wins, as under systemd."""
    from specdec_tui.hosts.local.spec import load_spec

    env_file = tmp_path / "e.env"
    env_file.write_text("SGLANG_ENABLE_SPEC_V2=1\n")
    unit = f"[Service]\nEnvironment=SGLANG_ENABLE_SPEC_V2=0 OTHER=x\nEnvironmentFile={env_file}\nExecStart=/bin/true\n"
    assert load_spec("u.service", unit).environment == {"SGLANG_ENABLE_SPEC_V2": "1", "OTHER": "x"}
