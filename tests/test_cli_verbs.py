"""Issue 12, point 6: one behaviour for one verb. The real CLI as a user runs it (a process), on the demo host
(the simulated SGLang server under the local supervisor) or a loopback test server; what is asserted is what
the user sees: the exit code and the words printed."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import specdec_tui.cli
from specdec_tui.core.paths import demo_dir
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.workspace import DemoWorkspace, ensure_demo_workspace
from specdec_tui.loop.health import wait_ready
from tests.bench_servers import RunningServer, ServerSpec

pytestmark = pytest.mark.timeout(180)


def cli(*argv: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", *argv], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"})


def ok(*argv: str) -> subprocess.CompletedProcess[str]:
    done = cli(*argv)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done


@pytest.fixture
def demo() -> Iterator[DemoWorkspace]:
    """The demo workspace the CLI's `--host demo` uses (private data dir); its server is stopped afterwards.
    Time scale 1: the simulated server takes seconds to load, like a real one takes minutes."""
    ws = ensure_demo_workspace(demo_dir(), time_scale=1.0)
    try:
        yield ws
    finally:
        cli("host", "stop", "--host", "demo")


def served_steps(base_url: str) -> int:
    asyncio.run(wait_ready(None, base_url, timeout_s=120))
    with urllib.request.urlopen(f"{base_url}/server_info", timeout=10) as resp:
        return int(json.load(resp)["speculative_num_steps"])


def file_steps(ws: DemoWorkspace) -> int:
    return int(UnitFile.parse(ws.unit_path.read_text()).flags()["speculative-num-steps"])


def push_steps(ws: DemoWorkspace, tmp_path: Path, steps: int) -> None:
    edited = tmp_path / f"steps{steps}.service"
    edited.write_text(UnitFile.parse(ws.unit_path.read_text()).set_flags(
        {"speculative-num-steps": str(steps), "speculative-num-draft-tokens": str(steps + 1)}).text)
    ok("host", "push", "--host", "demo", str(edited))
    ok("host", "restart", "--host", "demo")


def test_host_push_follows_the_panels_rules(demo: DemoWorkspace, tmp_path: Path) -> None:
    """Issue 34: `host push` pushed the file's raw text. Now, as the panel's p: a unit that cannot run is refused in
    words and the host keeps its unit; a unit whose API key is hidden (`<redacted>`, as session files and drafts
    keep it) gets the key of the unit on the host back instead of pushing the placeholder."""
    with_key = UnitFile.parse(demo.unit_path.read_text()).set_flags({"api-key": "sk-host-secret"}).text
    demo.unit_path.write_text(with_key)
    bad = tmp_path / "bad.service"
    # a value 0.5.23's parser refuses (it takes -3: the hand table's range was the panel's own)
    bad.write_text(UnitFile.parse(with_key).set_flags({"speculative-num-steps": "three"}).text)
    refused = cli("host", "push", "--host", "demo", str(bad))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "was not pushed" in refused.stderr
    assert "argument --speculative-num-steps: invalid int value: 'three'" in refused.stderr
    assert demo.unit_path.read_text() == with_key
    hidden = tmp_path / "hidden.service"
    hidden.write_text(UnitFile.parse(with_key).set_flags({"api-key": "<redacted>", "speculative-num-steps": "2",
                                                          "speculative-num-draft-tokens": "3"}).text)
    ok("host", "push", "--host", "demo", str(hidden))
    pushed = UnitFile.parse(demo.unit_path.read_text()).flags()
    assert pushed["api-key"] == "sk-host-secret" and pushed["speculative-num-steps"] == "2"


# ------------------------------------------------------------------------------------- 1. rollback restarts


def test_host_rollback_restores_restarts_and_waits_until_healthy(demo: DemoWorkspace, tmp_path: Path) -> None:
    original = file_steps(demo)
    push_steps(demo, tmp_path, original + 2)
    assert served_steps(demo.base_url) == original + 2

    done = cli("host", "rollback", "--host", "demo")
    assert done.returncode == 0, done.stderr
    assert "restored the newest backup" in done.stdout
    assert f"--speculative-num-steps {original + 2} → {original}" in done.stdout  # what was restored
    assert "healthy again" in done.stdout and "host restart" not in done.stdout
    assert file_steps(demo) == original
    assert served_steps(demo.base_url) == original  # the server runs the restored flags, no extra step


def test_host_rollback_no_restart_restores_the_file_only(demo: DemoWorkspace, tmp_path: Path) -> None:
    original = file_steps(demo)
    push_steps(demo, tmp_path, original + 1)
    done = cli("host", "rollback", "--no-restart", "--host", "demo")
    assert done.returncode == 0, done.stderr
    assert "not restarted" in done.stdout and "host restart" in done.stdout
    assert file_steps(demo) == original
    assert served_steps(demo.base_url) == original + 1  # still the pushed flags, as the output said

    done = cli("host", "rollback", "--host", "demo")  # nothing left to restore: said in words
    assert done.returncode == 1 and "no backup to roll back to" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------------------- 2. bad unit_path in words


BAD_UNIT_PATHS = {
    "space": "/etc/systemd/system/my sglang.service",
    "semicolon": "/etc/systemd/system/x;rm -rf ~.service",
    "dotdot": "/etc/systemd/../sglang.service",
    "relative": "systemd/sglang.service",
}


@pytest.mark.parametrize("kind", sorted(BAD_UNIT_PATHS))
@pytest.mark.parametrize("verb", [("host", "status"), ("host", "rollback"), ("bench",), ("sweep", "--values", "1,2")])
def test_a_bad_unit_path_is_reported_in_words_by_every_command(tmp_path: Path, kind: str, verb: tuple[str, ...]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('schema_version = 1\n\n[hosts.gpu]\naddress = "gpu-box.invalid"\n'
                      f'unit = "sglang.service"\nunit_path = {json.dumps(BAD_UNIT_PATHS[kind])}\n')
    done = cli(*verb, "--host", "gpu", "--config", str(config), timeout=60)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"{config}:6: hosts.gpu.unit_path:" in done.stderr  # which file, line and key
    assert "write unit_path = " in done.stderr  # what to do


def test_a_unit_name_that_gives_a_bad_path_is_reported_on_the_unit_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[hosts.gpu]\naddress = "gpu-box.invalid"\nunit = "my sglang.service"\n')
    done = cli("host", "status", "--host", "gpu", "--config", str(config), timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{config}:3: hosts.gpu.unit:" in done.stderr and "unit_path" in done.stderr


# ------------------------------------------------------------------------- 3. --config/--host on every verb


def test_every_host_verb_takes_config_and_host_after_the_verb(tmp_path: Path) -> None:
    from specdec_tui.cli.main import build_parser

    session = tmp_path / "s.toml"
    for verb in (["host", "status"], ["host", "rollback"], ["bench"], ["sweep", "--values", "1"],
                 ["session", "replay", str(session)]):
        args = build_parser().parse_args([*verb, "--config", "c.toml", "--host", "h"])
        assert (args.config, args.host) == ("c.toml", "h"), verb
        before = build_parser().parse_args(["--config", "c.toml", "--host", "h", *verb])  # or before it
        assert (before.config, before.host) == ("c.toml", "h"), verb


async def test_bench_reads_its_profile_from_config_given_after_the_verb(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[profiles.tiny]\nconcurrency = [1, 2]\nrequests = 2\nmax_tokens = 8\n")
    async with RunningServer(ServerSpec(delay_s=0.002)) as srv:
        done = await asyncio.to_thread(cli, "bench", "--url", srv.base_url, "--config", str(config),
                                       "--profile", "tiny", "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [lv["concurrency"] for lv in lines[:-1]] == [1, 2] and lines[-1]["errors"] == 0


# ----------------------------------------------------------------- 4. bench waits for the server, or fails


def test_bench_right_after_restart_waits_until_the_server_is_ready(demo: DemoWorkspace) -> None:
    ok("host", "restart", "--host", "demo")  # returns at once; the server is still loading
    done = cli("bench", "--host", "demo", "--json", "--concurrency", "1,2", "--requests", "2", "--max-tokens", "8")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["errors"] == 0 and summary["error"] is None and summary["best_output_tok_s"] > 0
    assert done.stderr == ""  # --json: silent while waiting
    # Issue 35 (8, 10): the summary's best is the one best, named; no figure carries noise digits.
    assert summary["best_rule"] == "highest output tok/s with TTFT p99 ≤ 2 s" and summary["peak_output_tok_s"] > 0
    floats: list[float] = []

    def collect(value: object) -> None:
        if isinstance(value, float):
            floats.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)

    for line in done.stdout.splitlines():
        collect(json.loads(line))
    assert floats and all(round(f, 3) == f for f in floats), [f for f in floats if round(f, 3) != f]

    ok("host", "restart", "--host", "demo")
    done = cli("bench", "--host", "demo", "--concurrency", "1", "--requests", "2", "--max-tokens", "8")
    assert done.returncode == 0, done.stderr
    assert "waiting for demo" in done.stderr and "be ready" in done.stderr  # a person is told why it pauses

    ok("host", "stop", "--host", "demo")
    done = cli("bench", "--host", "demo", "--json")
    assert done.returncode == 1 and "not running" in done.stderr and "host restart --host demo" in done.stderr


async def test_a_run_whose_requests_all_failed_exits_non_zero_with_the_reason() -> None:
    """A server that answers every completion with HTTP 500 (a URL where nothing listens is refused before any
    request: tests/test_bench_cli.py)."""
    from aiohttp import web

    from tests.loopback_http import serving

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "m"}]})

    async def broken(_: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    async with serving(get={"/v1/models": models}, post={"/v1/completions": broken}) as url:
        done = await asyncio.to_thread(cli, "bench", "--url", url, "--json", "--concurrency", "1,2", "--requests",
                                       "2", "--max-tokens", "8", timeout=60)
    assert done.returncode == 1, done.stdout
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["error"] and "all 4 requests failed" in summary["error"] and url in summary["error"]
    assert "all 4 requests failed" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------------------------------- import cycles


def cli_imports(path: Path) -> set[str]:
    """The specdec_tui.cli modules `path` imports, at the top or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "specdec_tui.cli":
                names.update(alias.name for alias in node.names)
            elif node.module.startswith("specdec_tui.cli."):
                names.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[2] for a in node.names if a.name.startswith("specdec_tui.cli."))
    return names


def test_the_cli_modules_import_each_other_without_a_cycle() -> None:
    folder = Path(specdec_tui.cli.__file__).parent
    graph = {p.stem: cli_imports(p) - {p.stem} for p in folder.glob("*.py") if p.stem != "__init__"}
    assert not [name for name, deps in graph.items() if "main" in deps], graph  # only the entry point imports main
    assert graph.get("errors") == set() and graph.get("common", set()) <= {"errors"}, graph

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        for nxt in sorted(graph.get(node, ())):
            found = cycle_from(nxt, path + [node])
            if found:
                return found
        return None

    cycles = [c for name in sorted(graph) if (c := cycle_from(name, []))]
    assert not cycles, "import cycle: " + " → ".join(cycles[0])


def test_host_push_refuses_what_the_hosts_release_refuses(demo: DemoWorkspace, tmp_path: Path) -> None:
    # the demo's release is the bundled 0.5.23, where --cuda-graph-max-bs is an ambiguous prefix: nothing is pushed
    before = demo.unit_path.read_text()
    edited = tmp_path / "old-flag.service"
    edited.write_text(UnitFile.parse(before).text.replace("--enable-metrics", "--enable-metrics --cuda-graph-max-bs 8"))
    done = cli("host", "push", "--host", "demo", str(edited))
    assert done.returncode == 1, done.stderr
    assert ("SGLang 0.5.23 refuses the command line (exit 2): ambiguous option: --cuda-graph-max-bs could match "
            "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill") in done.stderr
    assert "was not pushed (judged by SGLang 0.5.23)" in done.stderr and "Traceback" not in done.stderr
    assert demo.unit_path.read_text() == before
