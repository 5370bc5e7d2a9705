"""Hostile and malformed input: every parser answers with its documented error type (or a value), never
another exception. Complements the fuzz tests next to each parser (unit file, log lines, session text):
here the inputs are *structured* — valid-looking TOML with wrong types, SSE streams cut anywhere,
systemd/journald output with broken fields, shell arguments with every metacharacter.
"""

from __future__ import annotations

import subprocess
from dataclasses import fields
from itertools import pairwise

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdec_tui.bench.sse import SseSplitter
from specdec_tui.core.config import BenchProfile, Config, HostConfig, UIConfig
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import (
    Session,
    SessionError,
    Trial,
    dumps_session,
    loads_session,
)
from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.base import JournalRecord, ServiceStatus
from specdec_tui.hosts.ssh.host import parse_journal_line, parse_show

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# TOML values of every type, small: what a user might type in the wrong place.
TOML_VALUES = st.recursive(
    st.one_of(st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text("abcxyz_", min_size=1, max_size=6), inner, max_size=3)),
    max_leaves=6,
)


def keys_of(cls: type) -> list[str]:
    return [f.name for f in fields(cls) if f.name not in ("name", "source")]


# ---------------------------------------------------------------------------------------------- config

@FAST
@given(
    host=st.dictionaries(st.sampled_from(keys_of(HostConfig)), TOML_VALUES, max_size=4),
    profile=st.dictionaries(st.sampled_from(keys_of(BenchProfile)), TOML_VALUES, max_size=4),
    ui=st.dictionaries(st.sampled_from(keys_of(UIConfig)), TOML_VALUES, max_size=3),
    top=st.dictionaries(st.sampled_from(["schema_version", "default_host", "default_profile"]), TOML_VALUES, max_size=2),
)
def test_config_with_wrong_types_in_known_keys_raises_only_config_error(host, profile, ui, top) -> None:
    doc = {**top, "hosts": {"gpu": {"address": "gpu-box", **host}}, "profiles": {"fast": profile}, "ui": ui}
    text = tomlkit.dumps(doc)
    try:
        config = parse_config(text, "fuzz.toml")
    except ConfigError as err:
        message = str(err)
        assert message.startswith("fuzz.toml") and "Traceback" not in message
        return
    assert isinstance(config, Config)
    assert all(c >= 1 for c in config.profiles["fast"].concurrency)  # what got through is usable


@FAST
@given(st.text(alphabet=st.sampled_from(list('[]."=\n #ahostsprofilesui_version0123{},\'tf')), max_size=80))
def test_config_from_toml_shaped_noise_raises_only_config_error(text: str) -> None:
    try:
        parse_config(text, "noise.toml")
    except ConfigError:
        pass


# --------------------------------------------------------------------------------------------- session

def sample_session_doc() -> dict:
    session = Session(host="gpu", unit="sglang.service")
    trial = Trial(id=1, unit_text="[Service]\nExecStart=/x --a 1\n", flags={"a": "1", "b": None}, status="ok")
    trial.levels.append(LevelResult(concurrency=1, requests=3, output_tok_s=12.5))
    session.add(trial)
    return tomlkit.parse(dumps_session(session)).unwrap()


SESSION_PATHS = [("host",), ("created",), ("profile",), ("profile", "concurrency"), ("trials",), ("trials", 0),
                 ("trials", 0, "id"), ("trials", 0, "status"), ("trials", 0, "flags"), ("trials", 0, "started_at"),
                 ("trials", 0, "profile"), ("trials", 0, "levels"), ("trials", 0, "levels", 0),
                 ("trials", 0, "levels", 0, "output_tok_s"), ("trials", 0, "levels", 0, "ttft_ms"),
                 ("trials", 0, "facts"), ("trials", 0, "replay_of"), ("trials", 0, "pushed_at")]


@FAST
@given(changes=st.lists(st.tuples(st.sampled_from(SESSION_PATHS), TOML_VALUES), min_size=1, max_size=3))
def test_session_with_wrong_types_anywhere_raises_only_session_error(changes) -> None:
    doc = sample_session_doc()
    for path, value in changes:
        target = doc
        for step in path[:-1]:
            if isinstance(target, dict) and step in target or isinstance(target, list) and isinstance(step, int) and step < len(target):
                target = target[step]
            else:
                break
        else:
            if isinstance(target, dict):
                target[path[-1]] = value
            elif isinstance(target, list) and isinstance(path[-1], int) and path[-1] < len(target):
                target[path[-1]] = value
    try:
        text = tomlkit.dumps(doc)
    except Exception:  # noqa: BLE001 - tomlkit cannot write every shape (e.g. an array of mixed tables)
        return
    try:
        session = loads_session(text, "fuzz.toml")
    except SessionError as err:
        assert str(err).startswith("fuzz.toml")
        return
    dumps_session(session)  # whatever loads can be saved again


# ------------------------------------------------------------------------------------------------- SSE

EVENT = st.tuples(
    st.one_of(st.none(), st.text(alphabet="abcdefghij_", min_size=1, max_size=8).map(str.encode)),
    st.lists(st.binary(max_size=20).filter(lambda b: b"\n" not in b and b"\r" not in b), min_size=1, max_size=3),
)


def encode_event(name: bytes | None, lines: list[bytes], eol: bytes) -> bytes:
    head = b"event: " + name + eol if name is not None else b""
    return head + b"".join(b"data: " + line + eol for line in lines) + eol


@FAST
@given(events=st.lists(EVENT, max_size=6), eol=st.sampled_from([b"\n", b"\r\n"]), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_sse_events_cut_anywhere_come_out_whole_and_in_order(events, eol, cuts) -> None:
    stream = b"".join(encode_event(name, lines, eol) for name, lines in events)
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    splitter = SseSplitter()
    got = []
    for a, b in pairwise(bounds):
        got += splitter.feed(stream[a:b])
    assert got == [(name, b"\n".join(lines)) for name, lines in events]
    assert splitter.pending == b""


@FAST
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_sse_splitter_takes_any_bytes(chunks) -> None:
    splitter = SseSplitter()
    for chunk in chunks:
        for name, data in splitter.feed(chunk):
            assert name is None or isinstance(name, bytes)
            assert isinstance(data, bytes)


# ---------------------------------------------------------------------------- systemd and journald text

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=10), st.lists(st.integers(-5, 300), max_size=5)
)


@FAST
@given(st.dictionaries(st.sampled_from(["MESSAGE", "__CURSOR", "__REALTIME_TIMESTAMP", "PRIORITY", "_PID"]), JSON_SCALARS))
def test_journal_json_with_odd_fields_gives_a_record_or_none(entry) -> None:
    import orjson

    record = parse_journal_line(orjson.dumps(entry))
    assert record is None or isinstance(record, JournalRecord)


@FAST
@given(st.binary(max_size=120))
def test_journal_line_of_any_bytes_gives_a_record_or_none(raw: bytes) -> None:
    record = parse_journal_line(raw)
    assert record is None or isinstance(record.message, str)


@FAST
@given(st.lists(st.tuples(st.sampled_from(["ActiveState", "SubState", "MainPID", "ExecMainStatus", "NRestarts",
                                           "ActiveEnterTimestamp", "Result", "Junk"]),
                          st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=12)), max_size=8))
def test_systemctl_show_with_odd_values_gives_a_status(pairs) -> None:
    status = parse_show("u.service", "\n".join(f"{k}={v}" for k, v in pairs))
    assert isinstance(status, ServiceStatus)


# ------------------------------------------------------------------------------------- remote commands

@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=16),
                min_size=1, max_size=4))
def test_any_argument_reaches_the_remote_program_as_one_exact_word(args) -> None:
    line = rc.cmd("printf", "%s\\0", *args).line
    out = subprocess.run(["sh", "-c", line], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [a.encode() for a in args]


SHELL_CHARS = ";$()`\n \t|&'\"\\<>*?~"


@settings(max_examples=80, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda s: any(c in s for c in SHELL_CHARS)))
def test_paths_and_cursors_with_shell_characters_are_refused(text: str) -> None:
    refused = []
    for build in (lambda: rc.cat("/etc/" + text), lambda: rc.rename("/tmp/a", "/tmp/" + text)):
        try:
            build()
        except ValueError:
            refused.append(True)
    assert refused == [True, True], f"a path with {text!r} was accepted"
    if any(c in text for c in SHELL_CHARS.replace(";", "")):  # `;` and `=` belong to journald's cursor alphabet
        try:
            rc.journal("u.service", after_cursor=text, lines=None, follow=False)
        except ValueError:
            return
        raise AssertionError(f"cursor {text!r} accepted")


def test_a_trailing_newline_is_refused_in_names_paths_and_cursors() -> None:
    """`$` in a Python regex also matches before a final newline; the validators must not."""
    import pytest

    from specdec_tui.hosts.errors import UnitRejected

    with pytest.raises(UnitRejected):
        rc.valid_unit_name("sglang.service\n")
    with pytest.raises(ValueError):
        rc.valid_path("/etc/systemd/system/sglang.service\n")
    with pytest.raises(ValueError):
        rc.valid_cursor("s=0a1b\n")


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)

