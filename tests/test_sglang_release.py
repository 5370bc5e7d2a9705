"""The host's SGLang judges its unit: the version and the schema are asked of the unit's Python (the real
snippets, run by a real Python on a stand-in `sglang` package), cached per version; an unknown version or a failing
snippet leaves the bundled 0.5.23 in charge, and the note says so."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.exec_start import ExecStart
from specdec_tui.core.flags import validate
from specdec_tui.core.session import Session
from specdec_tui.core.sglang_schema.host_probe import VERSION_SOURCE, schema_source, unit_python
from specdec_tui.hosts.base import PythonProbe, PythonRun
from specdec_tui.loop.sglang_release import learn_release
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import WorkflowError

STANDIN = Path(__file__).parent / "data" / "sglang_standin"
UNIT_EXEC = ExecStart("", ["/opt/sglang/.venv/bin/python3", "-m", "sglang.launch_server", "--model-path", "m"])


class FakeHost:
    """A host whose Python is this test's, with `site` on its path: it runs what it is sent, as a host would."""

    def __init__(self, site: Path | None) -> None:
        self.site = site
        self.asked: list[tuple[str, bytes]] = []

    async def run_python(self, python: str, source: bytes) -> PythonRun:
        self.asked.append((python, source))
        env = {**os.environ, "PYTHONPATH": str(self.site) if self.site else ""}
        proc = await asyncio.create_subprocess_exec(sys.executable, "-", stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=env, cwd="/")
        out, err = await proc.communicate(source)
        return PythonRun(proc.returncode or 0, out.decode(), err.decode())


def test_the_probe_asks_the_units_own_python() -> None:
    assert unit_python(UNIT_EXEC) == "/opt/sglang/.venv/bin/python3"
    assert unit_python(ExecStart("", ["/usr/bin/env", "sglang", "serve"])) == "python3"
    assert isinstance(FakeHost(None), PythonProbe)


async def test_a_release_not_bundled_is_dumped_once_and_then_read_from_the_cache(tmp_path: Path) -> None:
    host = FakeHost(STANDIN)
    first = await learn_release(host, UNIT_EXEC, cache=tmp_path)
    assert (first.version, first.source, first.note) == ("0.6.0.dev1", "host", "")
    assert [source for _, source in host.asked] == [VERSION_SOURCE, schema_source()]
    assert {p for p, _ in host.asked} == {"/opt/sglang/.venv/bin/python3"}
    assert (tmp_path / "0.6.0.dev1.json").is_file()
    again = FakeHost(STANDIN)
    second = await learn_release(again, UNIT_EXEC, cache=tmp_path)
    assert (second.version, second.source) == ("0.6.0.dev1", "cache")
    assert [source for _, source in again.asked] == [VERSION_SOURCE]  # the schema came from the cache


async def test_the_hosts_release_judges_the_unit_not_the_bundled_one(tmp_path: Path) -> None:
    release = await learn_release(FakeHost(STANDIN), UNIT_EXEC, cache=tmp_path)
    unit = {"model-path": "m", "cuda-graph-max-bs": "8"}
    assert validate(unit, release.schema) == []  # this release still has --cuda-graph-max-bs
    [bundled] = validate(unit)
    assert "SGLang 0.5.23 refuses the command line (exit 2): ambiguous option: --cuda-graph-max-bs" in bundled.message
    [choice] = [i for i in validate({"model-path": "m", "speculative-algorithm": "EAGLE3"}, release.schema)
                if i.flag == "speculative-algorithm"]
    assert choice.message == ("SGLang 0.6.0.dev1 refuses the command line (exit 2): argument --speculative-algorithm: "
                              "invalid choice: 'EAGLE3' (choose from 'EAGLE', 'NEXTN')")


async def test_a_host_without_sglang_is_judged_by_the_bundled_release_and_says_so(tmp_path: Path) -> None:
    release = await learn_release(FakeHost(tmp_path / "empty"), UNIT_EXEC, cache=tmp_path)
    assert (release.version, release.source) == ("0.5.23", "default")
    assert release.note == ("the SGLang version of /opt/sglang/.venv/bin/python3 on the host is unknown: judged by "
                            "the bundled SGLang 0.5.23")


async def test_a_failing_schema_snippet_falls_back_and_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "site"
    (broken / "sglang" / "srt").mkdir(parents=True)
    (broken / "sglang" / "__init__.py").write_text('__version__ = "0.7.0"\n')
    (broken / "sglang" / "srt" / "server_args.py").write_text("raise RuntimeError('no GPU here')\n")
    release = await learn_release(FakeHost(broken), UNIT_EXEC, cache=tmp_path / "cache")
    assert (release.version, release.source) == ("0.5.23", "default")
    assert "SGLang 0.7.0's flags could not be read from the host" in release.note
    assert "RuntimeError: no GPU here" in release.note and release.note.endswith("judged by the bundled SGLang 0.5.23")
    assert not (tmp_path / "cache" / "0.7.0.json").exists()


async def test_a_bundled_version_needs_no_dump(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "sglang").mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text('__version__ = "0.5.23"\n')
    host = FakeHost(site)
    release = await learn_release(host, UNIT_EXEC, cache=tmp_path)
    assert (release.version, release.source) == ("0.5.23", "bundled") and len(host.asked) == 1


async def test_a_host_that_runs_no_python_is_judged_by_the_bundled_release(tmp_path: Path) -> None:
    release = await learn_release(object(), UNIT_EXEC, cache=tmp_path)  # the demo's host: 0.5.23 is its default
    assert (release.version, release.source, release.note) == ("0.5.23", "bundled", "")


class PushHost(FakeHost):
    """The fake host, as far as a push goes: it keeps what it is sent."""

    def __init__(self, site: Path | None, unit: str) -> None:
        super().__init__(site)
        self.unit = unit
        self.pushed: list[str] = []

    async def read_unit(self) -> str:
        return self.unit

    async def push(self, text: str) -> str:
        self.pushed.append(text)
        return "pushed"


UNIT = """[Service]
ExecStart=/opt/sglang/.venv/bin/python3 -m sglang.launch_server --model-path m --port 30000
"""


async def test_the_push_refusal_is_the_hosts_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDEC_TUI_CACHE_DIR", str(tmp_path / "cache"))
    edited = UNIT.replace("--port 30000", "--port 30000 --cuda-graph-max-bs 8")

    def loop_on(host: PushHost) -> TrialLoop:
        return TrialLoop(host=host, session=Session(host="h", unit="u.service"), profile=BenchProfile(),  # type: ignore[arg-type]
                         base_url="http://127.0.0.1:1")

    newer = PushHost(STANDIN, UNIT)  # its release still has --cuda-graph-max-bs: the push goes through
    assert await loop_on(newer).push(edited) == "pushed" and newer.pushed == [edited]
    bare = PushHost(tmp_path / "no-sglang", UNIT)  # version unknown: the bundled 0.5.23 refuses it, in its words
    with pytest.raises(WorkflowError, match="SGLang 0.5.23 refuses the command line \\(exit 2\\): ambiguous option: "
                       "--cuda-graph-max-bs could match"):
        await loop_on(bare).push(edited)
    assert bare.pushed == []


class CliHost(FakeHost):
    """The fake host as `unit check --host` opens it: connected, asked, closed."""

    def __init__(self, site: Path | None) -> None:
        super().__init__(site)
        self.closed = False

    async def connect(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
def gpu_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "config.toml"
    config.write_text('[hosts.gpu]\naddress = "gpu-box.invalid"\n')
    monkeypatch.setenv("SPECDEC_TUI_CACHE_DIR", str(tmp_path / "cache"))
    return config


def _unit_file(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / f"{abs(hash(flags))}.service"
    path.write_text(UNIT.replace("--port 30000", f"--port 30000 {flags}"))
    return path


def test_unit_check_judges_by_the_hosts_release_and_says_which(
        tmp_path: Path, gpu_config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from specdec_tui.cli import common
    from specdec_tui.cli.main import main

    opened: list[CliHost] = []

    def open_fake(_config: object, name: str, **_kw: object) -> CliHost:
        assert name == "gpu"
        opened.append(CliHost(STANDIN))
        return opened[-1]

    monkeypatch.setattr(common, "open_cli_host", open_fake)
    old_flag = _unit_file(tmp_path, "--cuda-graph-max-bs 8")  # 0.5.23 refuses it; the host's 0.6.0.dev1 has it
    assert main(["unit", "check", str(old_flag), "--host", "gpu", "--config", str(gpu_config)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("judged by SGLang 0.6.0.dev1 (the release gpu runs; its flags read from the "
                                   "host now)")
    assert "no problems found" in out and opened[-1].closed
    assert main(["unit", "check", str(old_flag)]) == 1  # no host: the bundled default, as before
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "judged by SGLang 0.5.23 (bundled)"
    assert "error: SGLang 0.5.23 refuses the command line (exit 2): ambiguous option: --cuda-graph-max-bs" in out
    newer_flag = _unit_file(tmp_path, "--mem-fraction-static 0.8")  # 0.5.23 has it; the host's release does not
    assert main(["unit", "check", str(newer_flag), "--host", "gpu", "--config", str(gpu_config)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "judged by SGLang 0.6.0.dev1 (the release gpu runs; its flags cached from the host)"
    assert "error: SGLang 0.6.0.dev1 refuses the command line (exit 2)" in out and "--mem-fraction-static" in out
    assert main(["unit", "check", str(newer_flag)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "judged by SGLang 0.5.23 (bundled)"
    # the cached release by name, with no host; and the bundled one by name
    assert main(["unit", "check", str(old_flag), "--release", "0.6.0.dev1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "judged by SGLang 0.6.0.dev1 (cached)"
    assert main(["unit", "check", str(old_flag), "--release", "0.5.23"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "judged by SGLang 0.5.23 (bundled)"


def test_unit_check_says_when_the_hosts_release_is_unknown_and_which_judged(
        tmp_path: Path, gpu_config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from specdec_tui.cli import common
    from specdec_tui.cli.main import main

    monkeypatch.setattr(common, "open_cli_host", lambda *_a, **_k: CliHost(tmp_path / "no-sglang"))
    unit = _unit_file(tmp_path, "--cuda-graph-max-bs 8")
    assert main(["unit", "check", str(unit), "--host", "gpu", "--config", str(gpu_config)]) == 1
    first, note = capsys.readouterr().out.splitlines()[:2]
    assert first == "judged by SGLang 0.5.23 (bundled; gpu's own release is not known)"
    assert note == ("note: the SGLang version of /opt/sglang/.venv/bin/python3 on the host is unknown: judged by the "
                    "bundled SGLang 0.5.23")


def test_unit_check_names_the_releases_it_can_judge_by(
        tmp_path: Path, gpu_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from specdec_tui.cli.main import main

    unit = _unit_file(tmp_path, "")
    assert main(["unit", "check", str(unit), "--release", "9.9.9"]) == 2
    err = capsys.readouterr().err
    assert "SGLang 9.9.9 is neither bundled (0.5.23) nor cached from a host (none yet)" in err
    assert main(["unit", "check", str(unit), "--release", "0.5.23", "--host", "gpu", "--config", str(gpu_config)]) == 2
    assert "give either --host NAME" in capsys.readouterr().err
