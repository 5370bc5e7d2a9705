"""The simulator across nodes, as real processes on 127.0.0.1: `--nnodes/--node-rank/--dist-init-addr`.

upstream: python/sglang/srt/entrypoints/engine.py (a rank >= 1 runs no tokenizer nor HTTP server; node 0 serves once
the schedulers of every node are ready), python/sglang/srt/managers/scheduler.py ("Scheduler hit an exception: "),
python/sglang/srt/entrypoints/engine.py's sigquit handler ("Received sigquit from a child process. It usually means
the child failed."); torch/csrc/distributed/c10d/socket.cpp ("The client socket has failed to connect to [H]:P
(errno: 111 - Connection refused).") and gloo's tcp/pair.cc ("Connection closed by peer [H]:P").
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

from tests.test_sim_support import SimProcess, free_port

FAST = ["--model-path", "sim-model", "--tp-size", "4", "--time-scale", "50", "--load-seconds", "1"]
C10D = re.compile(r"^\[W\d{4} \d\d:\d\d:\d\d\.\d{9} socket\.cpp:\d+\] \[c10d\] The client socket has failed to connect "
                  r"to \[127\.0\.0\.1\]:(\d+) \(errno: 111 - Connection refused\)\.$")
PEER_CLOSED = re.compile(r"^RuntimeError: \[\.\./third_party/gloo/gloo/transport/tcp/pair\.cc:\d+\] "
                         r"Connection closed by peer \[127\.0\.0\.1\]:\d+$")
SIGQUIT = "Received sigquit from a child process. It usually means the child failed."
READY = "The server is fired up and ready to roll!"


@pytest.fixture
def nodes():
    procs: list[SimProcess] = []
    dist = f"127.0.0.1:{free_port()}"

    def start(rank: int, nnodes: int = 2) -> SimProcess:
        p = SimProcess([*FAST, "--nnodes", str(nnodes), "--node-rank", str(rank), "--dist-init-addr", dist]).start()
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.stop()


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def _health(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
        return resp.status


def test_node0_serves_only_after_every_rank_joined_and_a_rank_serves_no_http(nodes) -> None:
    worker = nodes(1)
    # node 0 is not up yet: the worker says so in torch's words, naming node 0's address
    line = worker.wait_line("[c10d] The client socket has failed to connect to")
    stamped = line[line.index("[W"):]
    assert C10D.match(stamped), stamped
    head = nodes(0)
    head.wait_ready()
    assert _health(head.port) == 200
    assert _refused(worker.port)  # a rank > 0 never binds the HTTP port
    assert READY not in worker.output()


def test_node0_waits_for_missing_ranks() -> None:
    dist_port = free_port()
    head = SimProcess([*FAST, "--nnodes", "3", "--node-rank", "0", "--dist-init-addr", f"127.0.0.1:{dist_port}"]).start()
    other: list[SimProcess] = []
    try:
        head.wait_line("server_args=")
        from tests.hostlab.lab import wait_for
        wait_for(lambda: not _refused(dist_port) or None, 20, "node 0 to listen on its dist-init port")
        one = SimProcess([*FAST, "--nnodes", "3", "--node-rank", "1", "--dist-init-addr", f"127.0.0.1:{dist_port}"]).start()
        other.append(one)
        # with rank 1 joined and rank 2 missing, node 0 neither binds HTTP nor reports ready
        one.wait_line("server_args=")
        assert _refused(head.port) and READY not in head.output()
        two = SimProcess([*FAST, "--nnodes", "3", "--node-rank", "2", "--dist-init-addr", f"127.0.0.1:{dist_port}"]).start()
        other.append(two)
        head.wait_ready()
        assert _health(head.port) == 200
    finally:
        for p in (head, *other):
            p.stop()


def _lost_peer_lines(p: SimProcess) -> list[str]:
    """The gloo error lines, without the sim's `[date time TP0] ` log prefix."""
    return [ln for ln in p.lines if PEER_CLOSED.match(re.sub(r"^\[[^\]]*\] ", "", ln))]


def test_a_killed_rank_takes_node0_down_in_upstreams_words(nodes) -> None:
    head, worker = nodes(0), nodes(1)
    head.wait_ready()
    assert worker.proc is not None
    worker.proc.send_signal(signal.SIGKILL)
    assert head.wait_exit() == 1
    assert len(_lost_peer_lines(head)) == 1, head.output()
    assert "Scheduler hit an exception: Traceback (most recent call last):" in head.output()
    assert head.lines[-1].endswith(SIGQUIT)


def test_node0_stopping_takes_the_workers_down(nodes) -> None:
    head, worker = nodes(0), nodes(1)
    head.wait_ready()
    head.stop()
    assert head.proc is not None and head.proc.returncode == 0
    assert worker.wait_exit() == 1
    assert len(_lost_peer_lines(worker)) == 1, worker.output()
    assert worker.lines[-1].endswith(SIGQUIT)


def test_a_worker_stopped_while_waiting_exits_cleanly(nodes) -> None:
    worker = nodes(1)
    worker.wait_line("[c10d]")
    worker.stop()
    assert worker.proc is not None and worker.proc.returncode == 0


@pytest.mark.parametrize("flags, message", [
    (["--nnodes", "2", "--node-rank", "2", "--dist-init-addr", "127.0.0.1:5000"], "argument --node-rank: must be in [0, 2)"),
    (["--nnodes", "2", "--node-rank", "1"], "argument --dist-init-addr: required when --nnodes > 1"),
    (["--nnodes", "2", "--dist-init-addr", "h0"], "argument --dist-init-addr: expected HOST:PORT, got 'h0'"),
])
def test_bad_node_flags_are_argparse_errors(flags: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "specdec_tui.sim", *FAST, *flags], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2
    assert message in done.stderr
