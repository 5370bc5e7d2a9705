"""The unit model gives back its input byte for byte and an edit touches only the flag's own line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from specdec_tui.core.exec_start import ENV_WORD, value_words
from specdec_tui.core.unit import UnitFile, UnitSyntaxError
from specdec_tui.core.unit_diff import flag_changes, unified_diff

UNITS = Path(__file__).parent / "data" / "units"
UNIT_FILES = sorted(UNITS.glob("*.service"))


def read(name: str) -> str:
    return (UNITS / name).read_bytes().decode("utf-8")


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    """Pairs of (old line, new line) that differ, for edits that keep the line count."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    assert len(old_lines) == len(new_lines), unified_diff(old, new)
    return [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]


@pytest.mark.parametrize("path", UNIT_FILES, ids=lambda p: p.name)
def test_every_sample_unit_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    unit = UnitFile.parse(text)
    assert unit.text == text
    assert str(unit) == text


def test_sample_units_cover_the_awkward_cases() -> None:
    texts = {p.name: p.read_bytes().decode() for p in UNIT_FILES}
    assert "\r\n" in texts["sglang-eagle3-crlf.service"]
    assert not texts["sglang-equals-oneline.service"].endswith("\n")
    assert "  \n" in texts["sglang-equals-oneline.service"]
    assert '"' in texts["sglang-quoted.service"] and "\n#" in texts["sglang-quoted.service"]


def test_seed_unit_reads_as_the_seed_describes() -> None:
    unit = UnitFile.parse(read("sglang-qwen.service"))
    command = unit.exec_start
    assert command.program == "/opt/sglang/.venv/bin/python"
    assert command.python_module == "sglang.launch_server"
    assert command.prefixes == ""
    assert unit.flags() == {
        "model-path": "Qwen/Qwen3.5-122B-A10B", "tp": "4", "speculative-algorithm": "NEXTN",
        "speculative-num-steps": "3", "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "4",
        "mem-fraction-static": "0.85", "host": "0.0.0.0", "port": "30000",
    }
    assert unit.get("Service", "Restart") == "on-failure"
    assert unit.get_all("Service", "Environment")[1] == '"HF_HOME=/data/hf" "HF_HUB_OFFLINE=1"'
    assert unit.get("Service", "ExecStart").startswith("/opt/sglang/.venv/bin/python -m sglang.launch_server")
    assert unit.get("Service", "Nope") is None


def test_quoted_unit_unquotes_values_and_skips_comments_inside_the_continuation() -> None:
    unit = UnitFile.parse(read("sglang-quoted.service"))
    assert unit.exec_start.prefixes == "@"
    assert unit.exec_start.python_module == "sglang.launch_server"
    assert unit.get_flag("model-path") == "/models/Qwen 2.5 7B"
    assert unit.get_flag("speculative-draft-model-path") == "/models/eagle head"
    assert unit.get_flag("served-model-name") == "qwen test"
    assert unit.get_flag("cuda-graph-bs") == "1 2 4 8"
    assert unit.get_flag("chunked-prefill-size") == "-1"
    assert unit.get_flag("host") == "${HOST}"
    assert unit.get_all("Service", "Environment") == ['"PYTHONPATH=/opt/my libs" \'SGLANG_LOG=1\'', "", "HF_HOME=/srv/hf"]


def test_equals_form_and_switches() -> None:
    unit = UnitFile.parse(read("sglang-equals-oneline.service"))
    assert unit.exec_start.prefixes == "-"
    assert unit.get_flag("tp-size") == "8"
    assert unit.has_flag("enable-metrics") and unit.get_flag("enable-metrics") is None
    assert not unit.has_flag("disable-cuda-graph")


def test_changing_a_flag_rewrites_only_its_line() -> None:
    text = read("sglang-qwen.service")
    edited = UnitFile.parse(text).set_flag("speculative-num-steps", "4")
    assert changed_lines(text, edited.text) == [("    --speculative-num-steps 3 \\", "    --speculative-num-steps 4 \\")]
    assert edited.get_flag("speculative-num-steps") == "4"


def test_set_flag_returns_a_new_unit_and_leaves_the_old_one() -> None:
    text = read("sglang-qwen.service")
    unit = UnitFile.parse(text)
    unit.set_flag("port", "31000")
    assert unit.text == text


def test_alias_is_edited_where_it_is_written() -> None:
    text = read("sglang-qwen.service")
    edited = UnitFile.parse(text).set_flag("--tp-size", "2")
    assert changed_lines(text, edited.text) == [("    --tp 4 \\", "    --tp 2 \\")]


def test_equals_form_stays_equals_and_keeps_crlf_free_file_without_final_newline() -> None:
    text = read("sglang-equals-oneline.service")
    edited = UnitFile.parse(text).set_flag("speculative-num-steps", "5")
    [(before, after)] = changed_lines(text, edited.text)
    assert before.replace("--speculative-num-steps=3", "--speculative-num-steps=5") == after
    assert not edited.text.endswith("\n")


def test_new_flag_gets_its_own_continuation_line_in_the_files_style() -> None:
    text = read("sglang-eagle3-crlf.service")
    edited = UnitFile.parse(text).set_flag("cuda-graph-max-bs", "32")
    assert "  --port 30000 \\\r\n  --cuda-graph-max-bs 32\r\n\r\n[Install]" in edited.text
    assert edited.text.count("\r\n") == text.count("\r\n") + 1
    assert "\n" not in edited.text.replace("\r\n", "")


def test_new_switch_and_list_values() -> None:
    unit = UnitFile.parse(read("sglang-qwen.service")).set_flags({"enable-metrics": None, "cuda-graph-bs": "1 2 4"})
    assert unit.flags()["enable-metrics"] is None
    assert "    --cuda-graph-bs 1 2 4\nRestart=" in unit.text
    assert unit.get_flag("cuda-graph-bs") == "1 2 4"


def test_new_flag_on_a_one_line_execstart_stays_on_that_line() -> None:
    text = read("sglang-equals-oneline.service")
    edited = UnitFile.parse(text).set_flag("mem-fraction-static", "0.8")
    [(_, after)] = changed_lines(text, edited.text)
    assert after.endswith("--enable-metrics --mem-fraction-static 0.8   ")


def test_removing_a_flag_drops_its_whole_line() -> None:
    text = read("sglang-qwen.service")
    edited = UnitFile.parse(text).remove_flag("speculative-eagle-topk")
    assert edited.text == text.replace("    --speculative-eagle-topk 1 \\\n", "")


def test_removing_the_last_flag_ends_the_continuation_on_the_line_before() -> None:
    text = read("sglang-qwen.service")
    edited = UnitFile.parse(text).remove_flag("port")
    assert edited.text == text.replace("    --host 0.0.0.0 \\\n    --port 30000\n", "    --host 0.0.0.0\n")
    assert edited.exec_start.argv[-2:] == ["--host", "0.0.0.0"]


def test_removing_a_flag_that_shares_a_line_removes_only_its_words() -> None:
    text = read("sglang-quoted.service")
    edited = UnitFile.parse(text).remove_flag("port").remove_flag("speculative-algorithm")
    assert "\t--host ${HOST}\nRestart" in edited.text
    assert "\t--speculative-draft-model-path '/models/eagle head' \\\n" in edited.text
    assert "# the draft head lives next to the target\n" in edited.text


def test_switching_a_valued_flag_to_a_switch_and_back() -> None:
    text = read("sglang-qwen.service")
    unit = UnitFile.parse(text).set_flag("speculative-eagle-topk", None)
    assert unit.has_flag("speculative-eagle-topk") and unit.get_flag("speculative-eagle-topk") is None
    assert unit.set_flag("speculative-eagle-topk", "1").text == text


def test_values_that_need_quotes_are_quoted() -> None:
    unit = UnitFile.parse(read("sglang-qwen.service")).set_flag("served-model-name", 'qwen "fast"')
    assert '    --served-model-name "qwen \\"fast\\""\n' in unit.text
    assert unit.get_flag("served-model-name") == 'qwen "fast"'


def test_absent_flag_removal_is_a_no_op() -> None:
    text = read("sglang-qwen.service")
    assert UnitFile.parse(text).remove_flag("disable-cuda-graph").text == text


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[Service]\nExecStart=/bin/x\nnot an assignment\n", 3, "neither"),
        ("ExecStart=/bin/x\n[Service]\n", 1, "before the first [Section]"),
        ("[Service\nExecStart=/bin/x\n", 1, "section header"),
        ("[Service]\n=x\n", 2, "no key"),
    ],
)
def test_syntax_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(UnitSyntaxError) as err:
        UnitFile.parse(text)
    assert err.value.line == line
    assert words in str(err.value)


def test_unterminated_quote_in_execstart_names_its_physical_line() -> None:
    unit = UnitFile.parse('[Service]\nExecStart=/bin/x \\\n  --a 1 \\\n  --b "open\n')
    with pytest.raises(UnitSyntaxError) as err:
        unit.flags()
    assert (err.value.line, err.value.column) == (4, 7)


def test_missing_or_reset_execstart_is_reported() -> None:
    for text in ("[Unit]\nDescription=x\n", "[Service]\nExecStart=/bin/x\nExecStart=\n"):
        with pytest.raises(UnitSyntaxError, match="no ExecStart"):
            _ = UnitFile.parse(text).exec_start


def test_unified_diff_and_flag_changes() -> None:
    text = read("sglang-equals-oneline.service")
    old = UnitFile.parse(text)
    new = old.set_flags({"speculative-num-steps": "4", "cuda-graph-max-bs": "16"}, unset=["enable-metrics"])
    diff = unified_diff(text, new.text)
    assert diff.startswith("--- running\n+++ edited\n")
    assert diff.count("\\ No newline at end of file") == 1  # the unchanged last line, shown as context
    changes = {(c.name, c.old, c.new) for c in flag_changes(old, new)}
    assert changes == {("speculative-num-steps", "3", "4"), ("cuda-graph-max-bs", None, "16"),
                       ("enable-metrics", "", None)}
    assert unified_diff(text, text) == ""


# ---------------------------------------------------------------- properties
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[]=#;\\\"' \t\r\nabcES-x")), max_size=120))
def test_parse_raises_only_unit_syntax_error_and_round_trips(text: str) -> None:
    try:
        unit = UnitFile.parse(text)
    except UnitSyntaxError:
        return
    assert unit.text == text
    try:
        unit.flags()
    except UnitSyntaxError:
        pass


FLAG_NAMES = st.sampled_from(["speculative-num-steps", "speculative-eagle-topk", "port", "tp", "enable-metrics", "x-y"])
VALUES = st.one_of(st.none(), st.text(alphabet=st.sampled_from(list("ab1 \"'\\$")), min_size=1, max_size=6))


@settings(max_examples=150, deadline=None)
@given(name=FLAG_NAMES, value=VALUES, crlf=st.booleans(), final_newline=st.booleans())
def test_set_flag_reads_back_and_keeps_the_other_lines(name: str, value: str | None, crlf: bool, final_newline: bool) -> None:
    # an environment expansion is the value only of a one-value flag (test_unit_env_words)
    assume(value is None or not ENV_WORD.fullmatch(value) or value_words(name) == 1)
    text = read("sglang-qwen.service")
    if not final_newline:
        text = text.rstrip("\n")
    if crlf:
        text = text.replace("\n", "\r\n")
    edited = UnitFile.parse(text).set_flag(name, value)
    assert edited.get_flag(name) == value and edited.has_flag(name)
    old_lines, new_lines = set(text.splitlines()), edited.text.splitlines()
    untouched = [line for line in new_lines if line in old_lines]
    assert len(new_lines) - len(untouched) <= 2  # the flag's line, plus the previous last line when appended
    assert edited.text.endswith("\n") == final_newline
    assert UnitFile.parse(edited.text).remove_flag(name).get_flag(name) is None


def test_list_values_spread_over_continuation_lines() -> None:
    text = "[Service]\nExecStart=/bin/py -m sglang.launch_server --cuda-graph-bs 1 2 \\\n    4 8 \\\n    --port 1\n"
    unit = UnitFile.parse(text)
    assert unit.get_flag("cuda-graph-bs") == "1 2 4 8"
    edited = unit.set_flag("cuda-graph-bs", "16 32")
    assert edited.text == "[Service]\nExecStart=/bin/py -m sglang.launch_server --cuda-graph-bs 16 32 \\\n    --port 1\n"
    assert unit.remove_flag("cuda-graph-bs").exec_start.argv[-2:] == ["--port", "1"]
