"""`bench --url` with a control character or a space in it (a pasted URL that took a terminal code or a tab along)
is refused in words before any request: it was httpx's InvalidURL traceback from the first /health probe."""

from __future__ import annotations

import subprocess

from tests.tmux_session import program


def test_a_url_with_a_control_character_or_a_space_is_refused_in_words() -> None:
    for url in ("http://127.0.0.1:9/\x1b]0;x\x07", "http://127.0.0.1:9/ v1", "http://127.0.0.1:9\t"):
        done = subprocess.run([*program(), "bench", "--url", url, "--concurrency", "1"], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-500:]
        assert "--url holds a space or a control character" in done.stderr, done.stderr
        assert "\x1b" not in done.stderr


def test_a_url_that_does_not_parse_or_names_no_host_is_refused_in_words() -> None:
    """A bracket left open, a port out of range or not a number, an invalid IPv6 address: httpx's InvalidURL or the
    socket's OverflowError traceback; no host at all: 'every request failed (reset)', which blamed the server."""
    for url in ("http://[::1", "http://127.0.0.1:99999", "http://127.0.0.1:abc", "https://[zz]:1", "http://",
                "http://:80"):
        done = subprocess.run([*program(), "bench", "--url", url, "--concurrency", "1", "--requests", "1"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "Traceback" not in done.stderr, (url, done.stderr[-500:])
        assert f"--url is not a server's address (got {url!r}: " in done.stderr, done.stderr
