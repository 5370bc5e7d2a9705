"""Config and session files from another schema: read with a migration (older shapes, unknown newer keys)
or refused with a message that says what to do — never a crash, never silently wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.compare import compare_trials, summary_rows
from specdec_tui.core.config import SCHEMA_VERSION as CONFIG_SCHEMA
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import load_config, parse_config
from specdec_tui.core.session import SCHEMA_VERSION as SESSION_SCHEMA
from specdec_tui.core.session import SessionError, load_session, save_session
from specdec_tui.core.session_export import to_csv, to_markdown

# A session as the first specdec-tui releases wrote it: no labels, no facts, no pushed_at, levels with
# only the figures that existed then, `true` for a bare flag.
EARLY_SESSION = """\
schema_version = 1
created = 2026-03-01T10:00:00Z
host = "gpu-box"
unit = "sglang-qwen.service"

[[trials]]
id = 1
status = "ok"
flags = {speculative-num-steps = "1", enable-metrics = true}
unit_text = "[Service]\\nExecStart=/usr/bin/python -m sglang.launch_server --speculative-num-steps 1 --enable-metrics\\n"

[[trials.levels]]
concurrency = 1
requests = 8
output_tok_s = 123.0

[[trials]]
id = 2
status = "ok"
flags = {speculative-num-steps = "3", enable-metrics = true}
unit_text = "[Service]\\nExecStart=/usr/bin/python -m sglang.launch_server --speculative-num-steps 3 --enable-metrics\\n"

[[trials.levels]]
concurrency = 1
requests = 8
output_tok_s = 234.0
"""

# A session from a later specdec-tui of the same schema: keys this version does not know, at every level.
LATER_SESSION = """\
schema_version = 1
created = 2026-03-01T10:00:00Z
host = "gpu-box"
unit = "sglang-qwen.service"
workspace_tag = "from the future"

[profile]
name = "default"
concurrency = [1, 4]
future_knob = 3

[[trials]]
id = 7
status = "ok"
flags = {speculative-num-steps = "2"}
unit_text = "[Service]\\nExecStart=/x --speculative-num-steps 2\\n"
gpu_snapshot = {power_w = 350}

[trials.facts]
model = "qwen"
max_running_requests = 21
kv_pages = 4096

[[trials.levels]]
concurrency = 4
requests = 16
output_tok_s = 512.5
energy_j = 12.0
ttft_ms = {p50 = 80.0, p999 = 300.0}
"""


def test_an_early_session_loads_and_every_view_of_it_works(tmp_path: Path) -> None:
    path = tmp_path / "early.toml"
    path.write_text(EARLY_SESSION)
    session = load_session(path)
    assert [t.levels[0].output_tok_s for t in session.trials] == [123.0, 234.0]
    assert session.trials[0].flags == {"speculative-num-steps": "1", "enable-metrics": None}
    assert session.trials[0].facts is None and session.trials[0].label == ""
    assert len(summary_rows(session)) == 2
    comparison = compare_trials(session.trials[0], session.trials[1])
    assert comparison is not None
    assert "234" in to_markdown(session) and "123" in to_csv(session)
    # Saving writes the current shape; it reads back the same.
    save_session(session, path)
    again = load_session(path)
    assert [(t.id, t.flags, t.levels[0].output_tok_s) for t in again.trials] == \
        [(t.id, t.flags, t.levels[0].output_tok_s) for t in session.trials]


def test_keys_from_a_later_version_of_the_same_schema_are_ignored_not_fatal() -> None:
    from specdec_tui.core.session import loads_session

    session = loads_session(LATER_SESSION, "later.toml")
    trial = session.trials[0]
    assert trial.id == 7 and trial.facts is not None and trial.facts.max_running_requests == 21
    assert trial.levels[0].output_tok_s == 512.5 and trial.levels[0].ttft_ms.p50 == 80.0
    assert session.profile.concurrency == (1, 4)


@pytest.mark.parametrize(("version", "words"), [
    (SESSION_SCHEMA + 1, "upgrade specdec-tui"),
    (SESSION_SCHEMA + 40, "newer specdec-tui"),
    (0, "versions start at 1"),
    (-3, "versions start at 1"),
])
def test_a_session_of_another_schema_is_refused_in_words(tmp_path: Path, version: int, words: str) -> None:
    path = tmp_path / "other.toml"
    path.write_text(EARLY_SESSION.replace("schema_version = 1", f"schema_version = {version}"))
    with pytest.raises(SessionError) as err:
        load_session(path)
    assert words in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize(("text", "words"), [
    (f"schema_version = {CONFIG_SCHEMA + 1}\n", "newer specdec-tui"),
    ("schema_version = 0\n", "versions start at 1"),
    ('schema_version = "1"\n', "whole number"),
    (f"schema_version = {CONFIG_SCHEMA}\n[ui]\nfuture_setting = 1\n", "unknown setting"),
])
def test_a_config_of_another_schema_is_refused_with_the_line_and_what_to_do(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert words in str(err.value), str(err.value)
    assert str(path) in str(err.value)


def test_a_config_without_schema_version_is_read_as_the_current_one() -> None:
    config = parse_config('[hosts.gpu]\naddress = "gpu-box"\nunit = "sglang-qwen.service"\n')
    assert config.hosts["gpu"].address == "gpu-box"
