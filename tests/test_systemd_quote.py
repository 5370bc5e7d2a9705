"""ExecStart= splitting and quoting follow systemd's rules (man systemd.service, "Command lines")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_tui.core.systemd_quote import (
    join_args,
    quote_arg,
    split_command,
    split_words,
)
from specdec_tui.core.unit_errors import UnitSyntaxError


def values(text: str) -> list[str]:
    return [w.value for w in split_words(text)]


def test_double_and_single_quotes_group_words() -> None:
    assert values('a "b c" \'d e\' f') == ["a", "b c", "d e", "f"]


def test_quotes_inside_a_word_join_with_it() -> None:
    assert values('--served-model-name="my model" x') == ["--served-model-name=my model", "x"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"a\x41b", "aAb"),
        (r"a\sb", "a b"),
        (r'"tab\there"', "tab\there"),
        (r"'q\"q'", 'q"q'),
        (r"\101", "A"),
        (r"\u00e9", "é"),
        (r"back\\slash", "back\\slash"),
    ],
)
def test_c_escapes_are_decoded_inside_and_outside_quotes(text: str, expected: str) -> None:
    assert values(text) == [expected]


def test_variables_and_specifiers_stay_text() -> None:
    assert values("--host ${HOST} --port $PORT --name %i") == ["--host", "${HOST}", "--port", "$PORT", "--name", "%i"]


@pytest.mark.parametrize(
    ("line", "prefixes", "program"),
    [
        ("-/usr/bin/python3 -m x", "-", "/usr/bin/python3"),
        ("@/usr/bin/env name python3", "@", "/usr/bin/env"),
        ("+!!/bin/true", "+!!", "/bin/true"),
        (":-/bin/true", ":-", "/bin/true"),
        ("/bin/true", "", "/bin/true"),
    ],
)
def test_prefixes_are_split_from_the_program(line: str, prefixes: str, program: str) -> None:
    got_prefixes, argv = split_command(line)
    assert (got_prefixes, argv[0]) == (prefixes, program)


def test_word_spans_point_at_the_source() -> None:
    text = 'python -m x --model-path "/m odel"'
    last = split_words(text)[-1]
    assert text[last.start : last.end] == '"/m odel"'


@pytest.mark.parametrize(("text", "column"), [('a "open', 3), ("x 'y", 3)])
def test_unterminated_quote_raises_with_its_column(text: str, column: int) -> None:
    with pytest.raises(UnitSyntaxError) as err:
        split_words(text)
    assert err.value.column == column
    assert "unterminated" in err.value.message


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [("plain", "plain"), ("0.85", "0.85"), ("a b", '"a b"'), ("", '""'), ('say "hi"', '"say \\"hi\\""'),
     ("new\nline", '"new\\nline"'), ("back\\slash", '"back\\\\slash"'), (";", "\\;")],
)
def test_quote_arg_is_minimal(arg: str, quoted: str) -> None:
    assert quote_arg(arg) == quoted


ARGS = st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))), max_size=6)


@given(ARGS)
def test_join_then_split_gives_the_same_arguments(args: list[str]) -> None:
    assert values(join_args(args)) == args
