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
