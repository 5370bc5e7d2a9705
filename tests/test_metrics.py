"""The benchmark's statistics on hand-made timelines: exact definitions, no network."""

from __future__ import annotations

import pytest

from specdec_tui.core.metrics import (
    dist,
    overlap_ns,
    percentile,
    request_stats,
    resolve_chunk_tokens,
    tokens_in_window,
)

MS = 1_000_000


def test_percentile_interpolates_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert percentile(values, 50) == pytest.approx(5.5)
    assert percentile(values, 90) == pytest.approx(9.1)
    assert percentile(values, 99) == pytest.approx(9.91)
    assert percentile([7.0], 99) == 7.0


def test_dist_of_nothing_is_empty_and_of_samples_is_ordered() -> None:
    assert dist([]).p50 is None
    d = dist([3.0, 1.0, 2.0, 100.0])
    assert d.mean == pytest.approx(26.5)
    assert d.p50 == pytest.approx(2.5)
    assert d.p50 <= d.p90 <= d.p99 <= 100.0


def test_multi_token_chunk_gap_is_split_evenly_over_its_tokens() -> None:
    # request starts at 0; chunks at 100 ms (1 token), 120 ms (3 tokens), 150 ms (2 tokens)
    st = request_stats(0, 100 * MS, 150 * MS, [100 * MS, 120 * MS, 150 * MS], [1, 3, 2])
    assert st.tokens == 6
    assert st.ttft_ms == pytest.approx(100.0)
    assert st.e2e_ms == pytest.approx(150.0)
    assert st.itl_ms == pytest.approx([20 / 3] * 3 + [15.0] * 2)
    assert st.chunk_itl_ms == pytest.approx([20.0, 30.0])
    assert st.decode_tok_s == pytest.approx(5 / 0.050)  # 5 tokens after the first chunk in 50 ms
    assert st.tpot_ms == pytest.approx(10.0)


def test_tokens_already_in_the_first_chunk_are_not_decode_tokens() -> None:
    st = request_stats(0, 10 * MS, 30 * MS, [10 * MS, 30 * MS], [4, 2])
    assert st.decode_tok_s == pytest.approx(2 / 0.020)
    assert st.first_chunk_tokens == 4


def test_chunks_without_tokens_merge_into_the_next_gap() -> None:
    # a text chunk that carried no new token (held-back detokenizer output) does not cut the gap
    st = request_stats(0, 5 * MS, 40 * MS, [5 * MS, 20 * MS, 40 * MS], [1, 0, 2])
    assert st.chunk_itl_ms == pytest.approx([35.0])
    assert st.itl_ms == pytest.approx([17.5, 17.5])


def test_single_chunk_request_has_ttft_but_no_decode_rate() -> None:
    st = request_stats(0, 10 * MS, 10 * MS, [10 * MS], [5])
    assert st.ttft_ms == pytest.approx(10.0)
    assert st.decode_tok_s is None and st.itl_ms == []


def test_token_resolution_exact_final_only_and_estimated() -> None:
    assert resolve_chunk_tokens([1, 3, 2], 6) == ([1, 3, 2], False)
    # only a final usage total: the total stays exact, spread over the chunks without usage
    ks, est = resolve_chunk_tokens([-1, -1, -1], 10)
    assert sum(ks) == 10 and not est and max(ks) - min(ks) <= 1
    # no usage at all: one token per chunk, marked estimated
    assert resolve_chunk_tokens([-1, -1], None) == ([1, 1], True)


def test_window_counts_only_tokens_inside_it() -> None:
    times = [10, 20, 30, 40]
    toks = [1, 2, 3, 4]
    assert tokens_in_window(times, toks, 15, 35) == 5
    assert tokens_in_window(times, toks, 50, 60) == 0
    assert overlap_ns(0, 10, 5, 20) == 5
    assert overlap_ns(0, 4, 5, 20) == 0
