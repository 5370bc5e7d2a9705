"""Session files: round-trip, readable TOML, clear errors, and crash-safe saves."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tomlkit
from hypothesis import example, given, settings
from hypothesis import strategies as st

from specdec_tui.core.config import BenchProfile
from specdec_tui.core.results import Dist, LevelResult, ServerFacts
from specdec_tui.core.session import (
    SCHEMA_VERSION,
    Session,
    SessionError,
    Trial,
    dumps_session,
    load_session,
    loads_session,
    save_session,
)

UNIT = textwrap.dedent(
    """\
    [Service]
    # the seed's step 3
    ExecStart=/opt/venv/bin/python -m sglang.launch_server \\
        --model-path Qwen/Qwen3.5-122B-A10B \\
        --speculative-num-steps 3 \\
        --speculative-eagle-topk 1
    """
)


def make_session(n_trials: int = 3) -> Session:
    session = Session(host="gpu-box", unit="sglang-qwen.service", profile=BenchProfile(name="seed", ignore_eos=True))
    for i, (tok_s, mrr) in enumerate([(123.0, 26), (186.0, 21), (234.0, 17)][:n_trials], start=1):
        trial = Trial(
            id=i,
            unit_text=UNIT.replace("steps 3", f"steps {i}"),
            flags={"speculative-num-steps": str(i), "enable-metrics": None},
            started_at=datetime(2026, 12, 2, 15, i, tzinfo=UTC),
            pushed_at=datetime(2026, 12, 2, 15, i, 30, tzinfo=UTC),
            status="ok",
            facts=ServerFacts(model="qwen", max_running_requests=mrr, max_total_num_tokens=90000,
                              speculative={"algorithm": "EAGLE", "num_steps": i}),
            profile=BenchProfile(name="seed", ignore_eos=True),
            levels=[
                LevelResult(concurrency=1, requests=8, output_tokens=2048, output_tok_s=tok_s,
                            ttft_ms=Dist(40.5, 40.0, 45.0, 50.25), warnings=["acceptance inflated"]),
                LevelResult(concurrency=64, requests=64, errors=2, output_tokens=16000, output_tok_s=1500.5,
                            error_kinds={"stall": 2}),
            ],
            notes="temperature 0",
        )
        session.add(trial)
    return session


def test_round_trip_is_equal(tmp_path: Path) -> None:
    session = make_session()
    path = tmp_path / "s.toml"
    save_session(session, path)
    loaded = load_session(path)
    assert loaded == session
    assert [t.facts.max_running_requests for t in loaded.trials] == [26, 21, 17]


def test_file_is_human_readable_toml(tmp_path: Path) -> None:
    text = dumps_session(make_session(1))
    doc = tomlkit.parse(text)
    assert doc["schema_version"] == SCHEMA_VERSION
    # The unit stays a readable multi-line string, not an escaped one-liner.
    assert "--speculative-num-steps 1 \\\\\n" in text
    assert "output_tok_s = 123.0" in text
    assert "p99 = 50.25" in text  # plain numbers, no float noise


def test_floats_are_rounded_to_six_significant_digits() -> None:
    session = make_session(1)
    session.trials[0].levels[0].output_tok_s = 234.123456789
    loaded = loads_session(dumps_session(session))
    assert loaded.trials[0].levels[0].output_tok_s == 234.123


def test_newer_schema_gives_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "future.toml"
    path.write_text(f"schema_version = {SCHEMA_VERSION + 1}\n")
    with pytest.raises(SessionError, match="newer specdec-tui"):
        load_session(path)


@pytest.mark.parametrize(
    "text, words",
    [
        ("not toml = = =", "not valid TOML"),
        ("title = 'x'\n", "no integer schema_version"),
        ("schema_version = 1\ntrials = 3\n", "array of tables"),
        ("schema_version = 1\n[[trials]]\nstatus = 'ok'\n", "malformed trial"),
        ("schema_version = 1\n[[trials]]\nid = 1\nstatus = 'weird'\n", "unknown status"),
    ],
)
def test_bad_files_raise_session_error_in_words(text: str, words: str) -> None:
    with pytest.raises(SessionError, match=words):
        loads_session(text, "x.toml")


def test_missing_file_is_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="no such session file"):
        load_session(tmp_path / "nope.toml")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_loader_raises_only_session_error_on_arbitrary_text(text: str) -> None:
    try:
        loads_session(text)
    except SessionError:
        pass


@settings(max_examples=100, deadline=None)
@given(
    st.text(min_size=0, max_size=200),
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
                    st.one_of(st.none(), st.text(max_size=20)), max_size=5),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
@example(unit_text="[Service]\r\nExecStart=x\r\n", flags={"a": "\r\n"}, tok_s=0.0)  # CRLF: tomli-w#81, found here
def test_any_unit_text_and_flags_survive(unit_text: str, flags: dict, tok_s: float) -> None:
    session = Session(host="h")
    session.add(Trial(id=1, unit_text=unit_text, flags=flags, status="ok",
                      levels=[LevelResult(concurrency=1, output_tok_s=tok_s)]))
    loaded = loads_session(dumps_session(session))
    assert loaded.trials[0].unit_text == unit_text
    assert loaded.trials[0].flags == flags
    assert loaded.trials[0].levels[0].output_tok_s == pytest.approx(tok_s, rel=1e-5)


def test_save_killed_mid_write_leaves_old_file_intact(tmp_path: Path) -> None:
    """A writer killed while saving a huge session must leave the previous file whole and loadable."""
    path = tmp_path / "s.toml"
    save_session(make_session(1), path)
    before = path.read_bytes()
    script = textwrap.dedent(
        f"""
        import sys
        from specdec_tui.core.session import Session, Trial, save_session
        s = Session(host="h")
        for i in range(1, 41):
            s.add(Trial(id=i, unit_text="x" * 500_000, status="ok"))
        print("ready", flush=True)
        while True:
            save_session(s, {str(path)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        # Kill it as soon as a temp file shows up, i.e. in the middle of a write.
        while not list(tmp_path.glob(".s.toml.*.tmp")):
            if proc.poll() is not None:
                pytest.fail("writer exited early")
        proc.kill()
    finally:
        proc.wait()
    text = path.read_text()
    # The file is either the old session or a complete new one, never torn.
    loaded = loads_session(text)
    assert path.read_bytes() == before or len(loaded.trials) == 40
