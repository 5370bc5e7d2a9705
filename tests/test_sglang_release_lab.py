"""The SSH lab host answers the version and schema snippets for real: a stand-in `sglang` (tests/data/
sglang_standin, a release the panel does not bundle) is on the path of the Python a lab unit runs, and the panel
asks that Python over SSH with the same code it uses on a GPU host, then caches the schema per version."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specdec_tui.core.exec_start import ExecStart
from specdec_tui.core.flags import validate
from specdec_tui.loop.sglang_release import learn_release
from tests.hostlab.fixtures import lab_in_home_ssh
from tests.hostlab.lab import REPO

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(120)]
STANDIN = REPO / "tests" / "data" / "sglang_standin"


def lab_python() -> Path:
    """The lab's Python with the stand-in installed: a `python3` in the checkout (which the lab mounts) that runs
    this test's interpreter with the stand-in on its path."""
    python = REPO / "tests" / "hostlab" / ".standin" / "bin" / "python3"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{STANDIN}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python


async def test_the_lab_hosts_python_answers_and_its_schema_is_cached(make_ssh_host, tmp_path: Path) -> None:
    host = make_ssh_host()
    await host.connect()
    exec_start = ExecStart("", [str(lab_python()), "-m", "sglang.launch_server", "--model-path", "m"])
    first = await learn_release(host, exec_start, cache=tmp_path)
    assert (first.version, first.source, first.note) == ("0.6.0.dev1", "host", "")
    assert (tmp_path / "0.6.0.dev1.json").is_file()
    second = await learn_release(host, exec_start, cache=tmp_path)
    assert (second.version, second.source) == ("0.6.0.dev1", "cache")
    assert validate({"model-path": "m", "cuda-graph-max-bs": "8"}, first.schema) == []
    [refused] = validate({"model-path": "m", "cuda-graph-bs": "8"}, first.schema)
    # that release has no --cuda-graph-bs-decode either: argparse's words, and no rewrite to a flag it lacks
    assert refused.message == ("SGLang 0.6.0.dev1 refuses the command line (exit 2): unrecognized arguments: "
                               "--cuda-graph-bs 8. The fix removes it.")
    assert refused.fix is None and refused.remove == ("cuda-graph-bs",)


async def test_a_lab_python_without_sglang_leaves_the_bundled_release_in_charge(make_ssh_host, tmp_path: Path) -> None:
    host = make_ssh_host()
    await host.connect()
    release = await learn_release(host, ExecStart("", [sys.executable, "-m", "specdec_tui.sim"]), cache=tmp_path)
    assert (release.version, release.source) == ("0.5.23", "default")
    assert release.note == (f"the SGLang version of {sys.executable} on the host is unknown: judged by the bundled "
                            "SGLang 0.5.23")


def test_unit_check_over_ssh_is_judged_by_the_lab_hosts_release(hostlab, monkeypatch, tmp_path: Path, capsys) -> None:
    """`unit check FILE --host lab` through the factory (OpenSSH defaults): the lab's Python says 0.6.0.dev1, whose
    parser still has --cuda-graph-max-bs (0.5.23 refuses it as ambiguous)."""
    from specdec_tui.cli.main import main

    lab_in_home_ssh(hostlab, tmp_path, monkeypatch)
    monkeypatch.setenv("SPECDEC_TUI_CACHE_DIR", str(tmp_path / "cache"))
    config = tmp_path / "config.toml"
    config.write_text('[hosts.lab]\naddress = "hostlab"\nunit = "sglang-standin.service"\n')
    unit = tmp_path / "u.service"
    unit.write_text(f"[Service]\nExecStart={lab_python()} -m sglang.launch_server --model-path m --cuda-graph-max-bs 8\n")
    assert main(["unit", "check", str(unit), "--host", "lab", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "judged by SGLang 0.6.0.dev1 (the release lab runs; its flags read from the host now)"
    assert (tmp_path / "cache" / "sglang-schemas" / "0.6.0.dev1.json").is_file()
    assert main(["unit", "check", str(unit)]) == 1
    assert "ambiguous option: --cuda-graph-max-bs" in capsys.readouterr().out
