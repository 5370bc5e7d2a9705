"""No API key is written to a session, the config example, a log file or the terminal.

The real path: the demo unit passes `--api-key SECRET` to the simulated SGLang server (which, like SGLang,
logs its ServerArgs with the key), the panel reads the key from the environment variable the config
names, runs a trial, and the CLI benchmarks the same server. Then every file the panel wrote and all
CLI output are searched for the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, HostConfig
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.redact import REDACTED, redact_text, restore_secrets
from specdec_tui.core.session import Session, load_session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace
from specdec_tui.hosts.ssh.host import parse_journal_line
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.loop.unit_checks import api_key_from

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-test-4f1c9be07d2a55e1"
PROFILE = BenchProfile(name="t", concurrency=(1, 2), requests=2, max_tokens=16, prompts="repetitive", warmup=0)


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


async def test_a_trial_with_an_api_key_writes_it_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDEC_TEST_KEY", SECRET)
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=40)
    host = LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")
    runner = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=PROFILE),
                         profile=PROFILE, base_url=ws.base_url, session_path=tmp_path / "session.toml",
                         healthy_timeout_s=60, api_key=api_key_from(HostConfig(name="demo", api_key_env="SPECDEC_TEST_KEY")))
    keyed = UnitFile.parse(await runner.read_running()).set_flags({"api-key": SECRET}).text
    try:
        trial = await runner.run_trial(keyed)
        assert trial.status == "ok", trial.failure
        assert trial.errors == 0  # the key was sent: the server refuses requests without it (below)

        cli = subprocess.run(
            [sys.executable, "-m", "specdec_tui", "bench", "--url", ws.base_url, "--api-key-env", "SPECDEC_TEST_KEY",
             "--concurrency", "1", "--requests", "2", "--max-tokens", "8", "--warmup", "0", "--json"],
            capture_output=True, text=True, timeout=60, cwd=REPO, env={**os.environ})
        unauthorised = subprocess.run(
            [sys.executable, "-m", "specdec_tui", "bench", "--url", ws.base_url, "--concurrency", "1",
             "--requests", "1", "--max-tokens", "8", "--warmup", "0", "--json"],
            capture_output=True, text=True, timeout=60, cwd=REPO, env={k: v for k, v in os.environ.items() if k != "SPECDEC_TEST_KEY"})
        journal = [record.message async for record in host.journal(follow=False, lines=500)]
    finally:
        await host.close()

    assert cli.returncode == 0, cli.stderr
    levels = [json.loads(line) for line in cli.stdout.splitlines() if line.startswith('{"concurrency"')]
    assert [lv["errors"] for lv in levels] == [0]  # the CLI sent the key from the environment
    refused = [json.loads(line) for line in unauthorised.stdout.splitlines() if line.startswith('{"concurrency"')]
    assert refused[0]["error_kinds"] == {"http_401": 1}  # the sim really enforces the key
    for output in (cli.stdout, cli.stderr, unauthorised.stdout, unauthorised.stderr):
        assert SECRET not in output
    # The server logged its ServerArgs; what the panel kept and shows has the key masked.
    # 0.5.23 logs server_args as a dict: `'api_key': '<redacted>'` once masked (it was `api_key='…'` in the repr)
    assert any("'api_key': '<redacted>'" in line for line in journal), "the sim's server_args line is missing"
    assert not [line for line in journal if SECRET in line]
    # Only the unit itself (on the host, where the operator put it) holds the key.
    leaks = [p for p in files_containing(tmp_path, SECRET) if p.parent.name != "units"]
    assert leaks == [], f"the API key was written to {leaks}"
    saved = load_session(tmp_path / "session.toml").trials[0]
    assert saved.flags["api-key"] == REDACTED
    # A saved trial pushed again (replay) gets the real key back from the unit on the host.
    assert restore_secrets(saved.unit_text, keyed) == keyed


def test_config_example_holds_no_secret_and_a_pasted_key_is_refused_without_echo() -> None:
    example = (REPO / "config.example.toml").read_text()
    assert "sk-" not in example and "Bearer" not in example
    assert parse_config(example).hosts  # it names variables instead (api_key_env)
    with pytest.raises(ConfigError) as err:
        parse_config(f'[hosts.gpu]\naddress = "h"\nunit = "sglang.service"\napi_key = "{SECRET}"\n')
    assert "api_key_env" in str(err.value)
    assert SECRET not in str(err.value)


@pytest.mark.parametrize("line", [
    f"server_args=ServerArgs(model_path='m', api_key='{SECRET}', port=30000)",
    f"server_args={{'model_path': 'm', 'api_key': '{SECRET}', 'admin_api_key': None, 'port': 30000}}",  # 0.5.23
    f"server_args={{'model_path': 'm', 'api_key': None, 'admin_api_key': \"{SECRET}\"}}",
    f'ExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --api-key {SECRET} --tp 4',
    f'ExecStart=/usr/bin/python -m sglang.launch_server --api-key="{SECRET}"',
    f"ExecStart=/usr/bin/python -m sglang.launch_server \\\n    --api-key \\\n    {SECRET}",
    f"curl -H 'Authorization: Bearer {SECRET}' http://127.0.0.1:30000/health",
])
def test_redaction_masks_every_form_the_key_takes(line: str) -> None:
    assert SECRET not in redact_text(line)
    assert REDACTED in redact_text(line)


def test_remote_journal_lines_are_masked_before_anyone_sees_them() -> None:
    raw = ('{"__CURSOR": "c1", "__REALTIME_TIMESTAMP": "1700000000000000", "_PID": "42", "MESSAGE": '
           f'"server_args=ServerArgs(api_key=\'{SECRET}\', port=30000)"}}').encode()
    record = parse_journal_line(raw)
    assert record is not None and SECRET not in record.message and "port=30000" in record.message


def test_a_tunes_record_of_the_unit_before_it_keeps_no_key(tmp_path: Path) -> None:
    """A tune tags each trial with the unit that ran before it (to end on it when resumed): the key in that unit
    is masked in the file like the trial's own unit, and nowhere else does it appear."""
    from specdec_tui.core.session import Trial, save_session

    unit = f"[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --api-key {SECRET} --port 1\n"
    trial = Trial(id=1, unit_text=unit, sweep={"tune": {"id": "t", "before": unit, "points": [unit]}})
    path = tmp_path / "session.toml"
    save_session(Session(host="h", trials=[trial]), path)
    assert files_containing(tmp_path, SECRET) == []
    assert load_session(path).trials[0].sweep["tune"]["before"].count(REDACTED) == 1
