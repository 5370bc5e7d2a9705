"""The parser after a speed change reads every line as the parser before it did (property test over generated lines).

The code before is the package as of `BEFORE` (git), exported under another name and imported beside this one, so
hypothesis can throw the same generated line at both: metric lines in every era's format with odd numbers drawn
into them (Unicode digits, signs, exponents, underscores, trailing dots), every prefix the parser strips, and
soups of the fragments its fast paths key on (`(token/s)`, brackets, commas, dots). The golden file
(test_sglang_log_speed_equivalence) pins a fixed corpus; this one keeps looking for the line it lacks.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdec_tui.core.sglang.parse import parse_line

BEFORE = "1b4a6c8"  # main before stop 40's parser speed work (fields, prefix, parse)
REPO = Path(__file__).resolve().parent.parent
_FILES = ("src/specdec_tui/__init__.py", "src/specdec_tui/core/__init__.py", "src/specdec_tui/core/terminal_codes.py",
          "src/specdec_tui/core/sglang")


@pytest.fixture(scope="module")
def parse_before(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Any]]:
    """`parse_line` as of `BEFORE`, imported as `specdec_tui_before` (its own records, caches and regexes)."""
    root = tmp_path_factory.mktemp("before")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE, *_FILES], capture_output=True, check=False)
    if archive.returncode != 0:
        pytest.skip(f"the code before ({BEFORE}) is not in this clone's history: {archive.stderr.decode()[:200]}")
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    package = root / "specdec_tui_before"
    (root / "src" / "specdec_tui").rename(package)
    for source in package.rglob("*.py"):
        source.write_text(source.read_text().replace("specdec_tui.", "specdec_tui_before."))
    sys.path.insert(0, str(root))
    try:
        module: ModuleType = importlib.import_module("specdec_tui_before.core.sglang.parse")
        yield module.parse_line
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.startswith("specdec_tui_before")]:
            del sys.modules[name]


def seen(record: Any) -> str:
    """Everything a caller can read from a record, as JSON (which keeps 1, 1.0 and True apart)."""
    out: dict[str, Any] = {"type": type(record).__name__, "summary": record.summary()}
    for item in dataclasses.fields(record):
        value = getattr(record, item.name)
        out[item.name] = value.isoformat() if isinstance(value, datetime) else value
    if hasattr(record, "fatal"):
        out["fatal"] = record.fatal
    return json.dumps(out, sort_keys=True, ensure_ascii=False, default=repr)


_DIGITS = "0123456789"
numbers = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.floats(0, 1e5, allow_nan=False).map(lambda value: f"{value:.2f}"),
    st.text(alphabet=_DIGITS + ".-+eE_ %١٢٣²", min_size=0, max_size=7),
    st.sampled_from(("1.", ".5", "5.", "1.2.3", "00", "1e3", "1_000", "١٢.٥", "²", "True", "false", "12.50%",
                     "78 GB", "3 GiB", "[1, 2]", "nan", "inf")),
)
_KEYS = ("#running-req", "#token", "token usage", "accept len", "accept rate", "cuda graph", "npu graph",
         "gen throughput (token/s)", "#queue-req", "#new-seq", "#new-token", "#cached-token", "#full token",
         "full token usage", "#swa token", "mamba usage", "#gpu token", "pre-allocated usage", "#prealloc-req",
         "input throughput (token/s)", "per dp", "(a, b)", "x (y, z)")
pairs = st.lists(st.tuples(st.sampled_from(_KEYS), numbers), min_size=0, max_size=10).map(
    lambda items: ", ".join(f"{key}: {value}" for key, value in items))
heads = st.sampled_from(("Decode batch. ", "Decode batch, ", "Decode batch [17], ", "Prefill batch. ",
                         "Prefill batch, ", "Prefill batch [3]. ", "Decode batch", "max_total_num_tokens=",
                         "KV Cache is allocated. ", "Load weight end. ", "Capture cuda graph end. ", ""))
prefixes = st.sampled_from((
    "", "Nov 04 05:01:07 gpu-box python3[4242]: ", "2026-03-11T13:53:22+0000 llm-two python3[12345]: ",
    "[2025-11-04 05:01:07 TP0] ", "[2025-11-04 05:01:07 DP0 TP0 EP0] ", "[2025-11-04 05:01:07 DP1 TP1 EP1] ",
    "Nov 04 05:01:07 gpu-box python3[4242]: [2025-11-04 05:01:07 TP1 PP1] ", "[2025-11-04 05:01:07,123] ",
    "INFO:     ", "WARNING x.py:12: ", "[gpu=3] ", "[TP 2] ", "\x1b[32m", "\t",
    "[2025-11-04 05:01:07 TP0]\u2003", "[2025-11-04 05:01:07 TP0]x", "2025-11-04 05:01:07 TP0] ", "[2025-11-04 05:01:07 TP0 ]",
    "[2025-11-04 05:01:07 DP0 TP0 EP0]] ", "[2025-02-30 05:01:07] ", "[2025-11-04 05:01:07 tp0] ",
))
fragments = st.lists(st.sampled_from((
    "(token/s)", "(", ")", "[", "]", "{", "}", ",", ", ", ".", ": ", "=", " ", "token/s", "Decode batch", "1.5",
    "١٢", "GB", "True", '127.0.0.1:1 - "GET /health HTTP/1.1" 200', "The server is fired up and ready to roll!",
    "CUDA error", "is adjusted to", "\r", "\n", "\x1b[0m",
)), max_size=12).map("".join)
lines = st.builds(lambda prefix, head, body, tail: prefix + head + body + tail, prefixes, heads,
                  st.one_of(pairs, fragments), st.one_of(st.just(""), st.just(", "), fragments))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=lines)
def test_a_generated_line_parses_as_before(parse_before: Callable[[str], Any], line: str) -> None:
    assert seen(parse_line(line)) == seen(parse_before(line))


def test_the_code_before_is_a_different_parser_and_reads_a_batch_line(parse_before: Callable[[str], Any]) -> None:
    # guards the comparison itself: the old package was imported, not this one under another name
    line = "[2025-11-04 05:01:07 DP0 TP0] Decode batch, #running-req: 17, gen throughput (token/s): 1234.56, "
    before = parse_before(line)
    assert type(before).__module__.startswith("specdec_tui_before.")
    assert (before.running_req, before.gen_throughput, before.tags) == (17, 1234.56, {"DP": 0, "TP": 0})
    assert seen(parse_line(line)) == seen(before)
