"""A level's figures read the same live and read back from the session file. The file keeps 6 significant digits;
a figure of 102.749996 tok/s showed "102.7" on the Bench and Trials tabs and "102.8" on Fleet and Sessions (the
file's 102.75), one measurement, two numbers (seen on the demo under tmux)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_tui.bench.client import RequestRecord
from specdec_tui.bench.stats import LevelInputs, build_level_result
from specdec_tui.core.number_format import fmt_num
from specdec_tui.core.results import LevelResult
from specdec_tui.core.session import Session, Trial, dumps_session, load_session, loads_session, save_session


def one_request(tokens: int, span_ns: int) -> RequestRecord:
    """A request that streamed `tokens` single-token chunks, evenly, over `span_ns` (the level's whole window)."""
    rec = RequestRecord(measured=True, start_ns=1, first_content_ns=2, end_ns=1 + span_ns)
    for i in range(tokens):
        rec.times.append(2 + i * (span_ns - 2) // tokens)
        rec.deltas.append(1)
    rec.usage_total, rec.finish_reason, rec.done = tokens, "length", True
    return rec


def shown(level: LevelResult) -> list[str]:
    """The level's figures as the panel's tables write them."""
    dists = (level.ttft_ms, level.e2e_ms, level.per_request_tok_s, level.itl_ms)
    return [fmt_num(level.output_tok_s), fmt_num(level.achieved_concurrency, 2), fmt_num(level.duration_s, 2),
            *(fmt_num(v) for d in dists for v in (d.mean, d.p50, d.p90, d.p99))]


def test_a_throughput_just_below_a_rounding_edge_reads_the_same_live_and_from_the_file(tmp_path: Path) -> None:
    live = build_level_result([one_request(411, 4_000_000_019)], LevelInputs(concurrency=1))  # 102.7499995 tok/s
    session = Session(host="demo")
    session.add(Trial(id=1, unit_text="[Service]\nExecStart=/bin/true\n", status="ok", levels=[live]))
    save_session(session, tmp_path / "s.toml")
    [read] = load_session(tmp_path / "s.toml").trials[0].levels
    assert fmt_num(live.output_tok_s) == fmt_num(read.output_tok_s) == "102.8"
    assert read == live  # the whole level: what the panel holds is what the file holds


@settings(max_examples=200, deadline=None)
@given(tokens=st.integers(1, 5000), span_ns=st.integers(10_000_000, 100_000_000_000))
def test_every_level_s_figures_survive_the_file_unchanged(tokens: int, span_ns: int) -> None:
    live = build_level_result([one_request(tokens, span_ns)], LevelInputs(concurrency=1))
    session = Session(host="demo")
    session.add(Trial(id=1, unit_text="[Service]\nExecStart=/bin/true\n", status="ok", levels=[live]))
    [read] = loads_session(dumps_session(session)).trials[0].levels
    assert shown(read) == shown(live)
