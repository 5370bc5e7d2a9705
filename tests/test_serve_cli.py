"""`specdec-tui serve`'s rules before it serves: loopback unless --public (with a warning), errors in words, and the
panel command textual-serve hands to a shell carries every path as one word."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from specdec_tui.cli.main import build_parser, main
from specdec_tui.cli.serve_cmd import panel_command
from specdec_tui.hosts.local.workspace import free_port
from tests.tmux_session import program


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*program(), "serve", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("address", ["0.0.0.0", "192.168.1.5", "::", "example.org"])
def test_a_non_loopback_bind_is_refused_without_public(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--demo", "--bind", address]) == 1
    err = capsys.readouterr().err
    assert f"--bind {address} would let anyone who can reach it drive the host (there is no login)" in err
    assert "pass --public" in err


def test_public_warns_before_it_binds_and_a_bind_failure_is_one_line() -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails locally, nothing goes on the network.
    result = serve("--demo", "--bind", "192.0.2.1", "--public", "--port", "8123")
    assert result.returncode == 1
    assert "WARNING: serving the panel on 192.0.2.1:8123 with no login: anyone who can reach this port" in result.stderr
    assert "specdec-tui: cannot listen on 192.0.2.1:8123" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_taken_port_is_reported_in_words_and_loopback_gives_no_warning() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--demo", "--port", str(port))
    assert result.returncode == 1
    assert f"specdec-tui: cannot listen on 127.0.0.1:{port}" in result.stderr and "in use" in result.stderr
    assert "WARNING" not in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert "Open this URL" not in result.stdout, result.stdout  # it said so before the port turned out taken


@pytest.mark.parametrize("url", ["notaurl", "javascript:alert(1)", "ftp://box:8000", "http://", "http://box:port",
                                 "http://box:8000/?token=x"])
def test_a_public_url_browsers_cannot_use_is_refused_in_words(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """It became the page's websocket address: the page loaded and never drew, with nothing said."""
    assert main(["serve", "--demo", "--public-url", url]) == 1
    err = capsys.readouterr().err
    assert "--public-url" in err and "http://HOST[:PORT] or https://HOST[:PORT]" in err, err


def test_an_unknown_host_fails_at_start_not_in_every_browser_tab(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "nope"]) == 1
    assert "no host named 'nope' in the config" in capsys.readouterr().err


def test_the_panel_command_reaches_the_shell_as_the_same_words(tmp_path: Path) -> None:
    odd = tmp_path / "it's a $HOME; `x` dir"
    config, session = odd / "c.toml", odd / "s e.toml"
    args = build_parser().parse_args(["serve", "--host", "gpu 1", "--config", str(config), "--session", str(session),
                                      "--profile", "p"])
    command = panel_command(args)
    # textual-serve runs the command with /bin/sh -c; print each word the shell passes on, one per line
    words = subprocess.run(["/bin/sh", "-c", "printf '%s\\n' " + command], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert words == [sys.executable, "-m", "specdec_tui", "--host", "gpu 1", "--config", str(config),
                     "--session", str(session), "--profile", "p"]


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize(("bind", "url_host"), [("127.0.0.1", "127.0.0.1"), ("::1", "[::1]")])
def test_the_page_connects_its_websocket_back_to_the_bound_address(bind: str, url_host: str, tmp_path: Path) -> None:
    if bind == "::1" and not ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([*program(), "serve", "--demo", "--bind", bind, "--port", str(port)], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        page, token, deadline = "", None, time.monotonic() + 30
        while not page and time.monotonic() < deadline and proc.poll() is None:
            token = token or re.search(rf"http://{re.escape(url_host)}:{port}/\?token=(\S+)", log.read_text(errors="replace"))
            if token is None:
                time.sleep(0.1)
                continue
            try:
                with urllib.request.urlopen(f"http://{url_host}:{port}/?token={token[1]}", timeout=2) as response:
                    page = response.read().decode()
            except OSError:
                time.sleep(0.1)
        assert page, f"serve did not answer:\n{log.read_text(errors='replace')}"
        websocket = re.search(r'data-session-websocket-url="([^"]+)"', page)
        assert websocket is not None and websocket[1] == f"ws://{url_host}:{port}/ws/{token[1]}"
        assert "WARNING" not in log.read_text(errors="replace")  # loopback: no public warning
    finally:
        stop_serve(proc)


def stop_serve(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as an operator's Ctrl-C would; killed if it has not ended within 15 s (the test then says why)."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
