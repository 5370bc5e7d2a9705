"""A session's sidecar cache (`.NAME.toml.json`, core.session_cache) that does not read as the session its TOML
holds, though its stamp is the TOML's (damaged, or written by something else): the TOML decides. Before, an index
row naming a profile the cache does not hold ended `session show` in an IndexError traceback, and a trial line
that is no trial refused the whole session as "malformed" while its TOML was whole."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from specdec_tui.core.results import Dist, LevelResult
from specdec_tui.core.session import Session, Trial, save_session


def _session_with_cache(tmp_path: Path) -> Path:
    trials = [Trial(id=i, unit_text="", flags={"speculative-num-steps": str(i)}, host="gpu-a", status="ok",
                    label=f"steps={i}", levels=[LevelResult(concurrency=1, requests=8, output_tok_s=100.0 * i,
                                                           ttft_ms=Dist(p99=100.0))])
              for i in (1, 2)]
    path = tmp_path / "s.toml"
    save_session(Session(host="gpu-a", unit="sglang.service", trials=trials), path)
    _cli("show", path)  # a read writes the cache
    assert (tmp_path / ".s.toml.json").exists()
    return path


def _cli(action: str, path: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specdec_tui", "session", action, str(path), *more],
                          capture_output=True, text=True, timeout=120)


def _rewrite_cache(path: Path, top: Callable[[dict[str, Any]], None] | None = None,
                   trial: Callable[[dict[str, Any]], None] | None = None) -> None:
    """The cache changed in place; its stamp (the TOML's size, inode and time) stays, so it is taken as the TOML's."""
    cache = path.parent / f".{path.name}.json"
    lines = cache.read_bytes().split(b"\n")
    first = orjson.loads(lines[0])
    if top:
        top(first)
    lines[0] = orjson.dumps(first)
    if trial:
        doc = orjson.loads(lines[1])
        trial(doc)
        lines[1] = orjson.dumps(doc)
    cache.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("profile_at", [99, -5])
def test_an_index_row_naming_no_profile_reads_the_toml(tmp_path: Path, profile_at: int) -> None:
    path = _session_with_cache(tmp_path)
    _rewrite_cache(path, top=lambda first: first["index"][0].__setitem__("p", profile_at))
    run = _cli("show", path)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "steps=1" in run.stdout and "steps=2" in run.stdout


def test_a_cached_trial_that_is_no_trial_reads_the_toml(tmp_path: Path) -> None:
    path = _session_with_cache(tmp_path)
    _rewrite_cache(path, trial=lambda doc: doc.__setitem__("levels", [{"concurrency": 1e300}]))
    for action, more in (("show", ()), ("export", ("--format", "json")), ("compare", ("1", "2"))):
        run = _cli(action, path, *more)
        assert run.returncode == 0, f"{action}: {run.stderr}"
        assert "malformed" not in run.stderr and "Traceback" not in run.stderr
        assert "steps=1" in run.stdout, action
