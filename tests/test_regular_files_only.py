"""A FIFO or a symlink to /dev/zero where a session, its cache, the config or a theme is read (core.regular_file).
Before: a FIFO in the sessions dir held `session list` (and the panel's `o`) for ever, `--config FIFO` too, and a
symlink to /dev/zero was read until memory ran out. Now each is refused at once, in words, naming the file; the
other sessions are listed as before. The children run with 1 GB of address space, so a regression fails with a
MemoryError here instead of taking the shared machine's memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from specdec_tui.core.paths import config_dir, sessions_dir
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, save_session


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60, preexec_fn=_limited)


def _real_session() -> Path:
    sessions_dir().mkdir(parents=True, exist_ok=True)
    path = sessions_dir() / "real.toml"
    save_session(Session(host="gpu-a", unit="sglang.service", trials=[
        Trial(id=1, unit_text="", host="gpu-a", status="ok", label="mine",
              levels=[LevelResult(concurrency=1, requests=8, output_tok_s=123.4)])]), path)
    return path


def test_session_list_names_a_fifo_and_a_device_and_lists_the_rest() -> None:
    _real_session()
    os.mkfifo(sessions_dir() / "pipe.toml")
    os.symlink("/dev/zero", sessions_dir() / "zero.toml")
    run = _run("-m", "specdec_tui", "session", "list")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    rows = {line.split("│")[1].strip(): line for line in run.stdout.splitlines() if line.count("│") > 2}
    assert "123.4" in rows["real.toml"]
    assert "unreadable" in rows["pipe.toml"] and "FIFO" in rows["pipe.toml"]
    assert "unreadable" in rows["zero.toml"] and "a device" in rows["zero.toml"]
    for name in ("pipe", "zero"):
        shown = _run("-m", "specdec_tui", "session", "show", name)
        assert shown.returncode == 1 and "Traceback" not in shown.stderr
        assert f"{name}.toml: cannot read: it is a" in shown.stderr and "not a regular file" in shown.stderr


def test_a_fifo_where_the_cache_goes_is_replaced_by_the_cache() -> None:
    path = _real_session()
    cache = path.parent / f".{path.name}.json"
    cache.unlink(missing_ok=True)
    os.mkfifo(cache)
    run = _run("-m", "specdec_tui", "session", "show", "real")
    assert run.returncode == 0 and "mine" in run.stdout, run.stderr
    assert cache.is_file()  # the cache written over it (atomically), the next read fast again


def test_a_config_that_is_a_fifo_or_a_device_is_refused_in_words(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    for name, kind in (("pipe.toml", "a FIFO (named pipe)"), ("zero.toml", "a device")):
        run = _run("-m", "specdec_tui", "--config", str(tmp_path / name), "fleet", "status")
        assert run.returncode != 0 and "Traceback" not in run.stderr
        assert f"{name}: cannot read the file (it is {kind}, not a regular file)" in run.stderr


def test_a_theme_file_that_is_a_fifo_is_a_theme_error_and_the_others_load() -> None:
    themes = config_dir() / "themes"
    themes.mkdir(parents=True)
    os.mkfifo(themes / "pipe.toml")
    run = _run("-c", "from specdec_tui.core.theme_files import load_theme_files, bundled_theme_dir, user_theme_dir\n"
                     "specs, errors = load_theme_files(bundled_theme_dir(), user_theme_dir())\n"
                     "print(len(specs)); print(*errors, sep='\\n')")
    assert run.returncode == 0, run.stderr
    count, *errors = run.stdout.splitlines()
    assert int(count) >= 2  # the bundled themes
    assert len(errors) == 1 and "pipe.toml" in errors[0] and "FIFO" in errors[0], errors


def test_unit_show_check_and_diff_refuse_a_fifo_and_a_device_in_words(tmp_path: Path) -> None:
    unit = Path(__file__).parent / "data" / "units" / "sglang-qwen.service"
    os.mkfifo(tmp_path / "pipe.service")
    os.symlink("/dev/zero", tmp_path / "zero.service")
    for name, kind in (("pipe.service", "a FIFO (named pipe)"), ("zero.service", "a device")):
        for argv in (["show", str(tmp_path / name)], ["check", str(tmp_path / name)],
                     ["diff", str(unit), str(tmp_path / name)]):
            run = _run("-m", "specdec_tui", "unit", *argv)
            assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
            assert f"{name}: cannot read it (it is {kind}, not a regular file)" in run.stderr


def test_a_fifo_or_a_device_in_the_sessions_dir_holds_no_start() -> None:
    """Every start asks which session the host is on (loop.current_session), reading the top of each *.toml in
    the sessions dir: a FIFO there held `fleet status`, the panel and `demo` for ever, SIGTERM included."""
    _real_session()
    os.mkfifo(sessions_dir() / "pipe.toml")
    os.symlink("/dev/zero", sessions_dir() / "zero.toml")
    run = _run("-m", "specdec_tui", "fleet", "status")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "demo" in run.stdout  # the fleet's one host, answered
