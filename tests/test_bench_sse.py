"""SSE splitting on raw bytes: events cut anywhere across reads come out whole and in order."""

from __future__ import annotations

from specdec_tui.bench.sse import SseSplitter

STREAM = (
    b'data: {"a": 1}\n\n'
    b": keep-alive comment\n\n"
    b"event: error\ndata: {\"error\": \"boom\"}\n\n"
    b'data: {"b":\ndata: 2}\r\n\r\n'
    b"data: [DONE]\n\n"
)
EXPECTED = [(None, b'{"a": 1}'), (b"error", b'{"error": "boom"}'), (None, b'{"b":\n2}'), (None, b"[DONE]")]


def test_events_survive_every_cut_point() -> None:
    for cut in range(1, len(STREAM)):
        sp = SseSplitter()
        got = sp.feed(STREAM[:cut]) + sp.feed(STREAM[cut:])
        assert got == EXPECTED, f"cut at {cut}"


def test_byte_at_a_time() -> None:
    sp = SseSplitter()
    got = []
    for i in range(len(STREAM)):
        got += sp.feed(STREAM[i : i + 1])
    assert got == EXPECTED
    assert sp.pending == b""


def test_unterminated_tail_is_kept_pending() -> None:
    sp = SseSplitter()
    assert sp.feed(b'data: {"a": 1}\n\ndata: {"b"') == [(None, b'{"a": 1}')]
    assert sp.pending == b'data: {"b"'


def test_crlf_cut_between_cr_and_lf_inside_an_event_does_not_split_it() -> None:
    stream = b'data: {"b":\r\ndata: 2}\r\n\r\ndata: {"c": 3}\r\n\r\n'
    for cut in range(1, len(stream)):
        sp = SseSplitter()
        got = sp.feed(stream[:cut]) + sp.feed(stream[cut:])
        assert got == [(None, b'{"b":\n2}'), (None, b'{"c": 3}')], f"cut at {cut}"
