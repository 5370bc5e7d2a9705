"""What a stranger can send `specdec-tui serve` on loopback (a real serve process, raw HTTP on a socket): paths that
climb out of /static, a Host header naming another site (DNS rebinding), a 200 KB header and a header with an
escape code. Nothing outside what it serves is answered, the token page only under the served names, and the
operator's terminal gets one line per malformed request, never aiohttp's traceback with its locals."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from specdec_tui.hosts.local.workspace import free_port
from tests.test_serve_cli import stop_serve
from tests.tmux_session import program

pytestmark = pytest.mark.timeout(120)


@dataclass
class Served:
    port: int
    token: str
    log: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([*program(), "serve", "--demo", "--port", str(port)], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, token = time.monotonic() + 60, None
        while token is None and time.monotonic() < deadline and proc.poll() is None:
            token = re.search(rf"http://127\.0\.0\.1:{port}/\?token=(\S+)", log.read_text(errors="replace"))
            time.sleep(0.1)
        assert token is not None, log.read_text(errors="replace")
        yield Served(port, token[1], log)
    finally:
        stop_serve(proc)


def raw(port: int, request: bytes) -> tuple[int, bytes]:
    """The status and body of one raw HTTP/1.1 exchange with the served port."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    assert status is not None, data[:200]
    return int(status[1]), data.partition(b"\r\n\r\n")[2]


def get(port: int, target: str, host: str | None = None, extra: bytes = b"") -> tuple[int, bytes]:
    head = f"GET {target} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n".encode()
    return raw(port, head + extra + b"\r\n")


def test_paths_out_of_static_answer_nothing_but_404(served: Served) -> None:
    for target in ("/../../etc/passwd", "/static/../../../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd",
                   "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/static//etc/passwd", "/download/../../etc/passwd",
                   "/static/../../../../../../proc/self/environ"):
        status, body = get(served.port, target)
        assert status in (403, 404), (target, status)
        assert b"root:" not in body and b"PATH=" not in body, target


def test_the_token_page_answers_only_under_the_served_names(served: Served) -> None:
    page = f"/?token={served.token}"
    for name in (f"127.0.0.1:{served.port}", f"localhost:{served.port}", f"[::1]:{served.port}"):
        status, body = get(served.port, page, host=name)
        assert status == 200 and b"data-session-websocket-url" in body, name
    for name in ("evil.example", f"evil.example:{served.port}", "127.0.0.1", f"127.0.0.1:{served.port + 1}"):
        status, body = get(served.port, page, host=name)
        assert status == 421 and served.token.encode() not in body, name
        assert b"answers only at the URL it printed" in body


def test_a_malformed_request_is_one_line_in_the_log_not_a_traceback(served: Served) -> None:
    status, _ = get(served.port, "/", extra=b"X-Big: " + b"a" * 200_000 + b"\r\n")
    assert status == 400
    status, _ = get(served.port, "/", extra=b"User-Agent: \x1b]0;pwned\x07\x1b[31mred\r\n")
    assert status == 400
    status, _ = get(served.port, f"/?token={served.token}")  # and it still serves
    assert status == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and served.log.read_text(errors="replace").count("malformed request") < 2:
        time.sleep(0.1)
    log = served.log.read_text(errors="replace")
    assert log.count("refused a malformed request from 127.0.0.1: 400") == 2, log
    assert "Traceback" not in log and "╭" not in log and "Error handling request" not in log, log
    assert "\x1b]0;pwned" not in log and "\x07" not in log
    assert len(log.splitlines()) < 40, log  # the traceback with locals was ~55 lines a request
