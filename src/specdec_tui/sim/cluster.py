"""Multi-node rendezvous of the simulated server: `--nnodes N --node-rank R --dist-init-addr HOST:PORT`.

SGLang runs one server across N nodes: every node's scheduler joins torch.distributed over the TCP address
`--dist-init-addr` (node 0 listens there), only node 0 runs the tokenizer and the HTTP server, and a rank that
dies takes the others with it. The sim keeps that shape with one TCP link per rank > 0 to node 0: a rank sends
`rank R`, node 0 answers `ok` to every rank once all have joined, and a closed link means the peer is gone.

Wording read from upstream (not copied): a waiting rank logs torch's c10d client line (torch/csrc/distributed/
c10d/socket.cpp, "The client socket has failed to connect to [HOST]:PORT (errno: 111 - Connection refused).");
a peer that vanishes mid-collective surfaces as gloo's "Connection closed by peer [HOST]:PORT" in the scheduler,
which upstream reports as "Scheduler hit an exception: …" followed by "Received sigquit from a child process. It
usually means the child failed." (python/sglang/srt/managers/scheduler.py, python/sglang/srt/entrypoints/engine.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import time
from dataclasses import dataclass, field

from specdec_tui.sim.logs import SimLog, traceback_block

RETRY_S = 0.2  # how often a waiting rank tries node 0 again
SGLANG_SRT = "/usr/local/lib/python3.12/dist-packages/sglang/srt"
GLOO_PAIR = "../third_party/gloo/gloo/transport/tcp/pair.cc:534"


class ClusterError(Exception):
    """The rendezvous could not happen (node 0 cannot listen on --dist-init-addr); already logged."""


@dataclass(frozen=True, slots=True)
class DistAddr:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> DistAddr:
        """`HOST:PORT` (an IPv6 host in brackets); ValueError in words otherwise."""
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"expected HOST:PORT, got {text!r}")
        return cls(host.strip("[]"), int(port))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(slots=True)
class ClusterLink:
    """This node's links to its peers once everyone joined; `lost` resolves with the first peer that went away."""

    rank: int
    peers: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(default_factory=dict)
    lost: asyncio.Future[str] | None = None
    _watchers: list[asyncio.Task[None]] = field(default_factory=list)
    _server: asyncio.AbstractServer | None = None

    def watch(self) -> None:
        loop = asyncio.get_running_loop()
        self.lost = loop.create_future()
        for peer, (reader, writer) in self.peers.items():
            self._watchers.append(asyncio.create_task(self._watch(peer, reader, writer)))

    async def _watch(self, peer: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        name = writer.get_extra_info("peername") or ("?", 0)
        with contextlib.suppress(ConnectionError, OSError):
            while await reader.read(4096):
                pass
        if self.lost is not None and not self.lost.done():
            self.lost.set_result(f"[{name[0]}]:{name[1]}")

    async def close(self) -> None:
        for task in self._watchers:
            task.cancel()
        for _, writer in self.peers.values():
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def log_peer_lost(log: SimLog, peer: str) -> None:
    """What a surviving rank logs when another rank died: gloo's error in the scheduler, then the sigquit."""
    frames = [
        (f"{SGLANG_SRT}/managers/scheduler.py", 2943, "run_scheduler_process", "scheduler.event_loop_overlap()"),
        (f"{SGLANG_SRT}/distributed/parallel_state.py", 612, "all_reduce", "torch.distributed.all_reduce("),
    ]
    block = traceback_block(frames, f"RuntimeError: [{GLOO_PAIR}] Connection closed by peer {peer}")
    log.line("Scheduler hit an exception: " + block, tp_rank=0, important=True)
    log.line("Received sigquit from a child process. It usually means the child failed.", important=True)


async def gather(addr: DistAddr, nnodes: int, log: SimLog) -> ClusterLink:
    """Node 0: listen on the dist-init address until ranks 1..N-1 have joined, then release them all."""
    link = ClusterLink(rank=0)
    everyone = asyncio.get_running_loop().create_future()

    async def on_join(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hello = (await reader.readline()).decode(errors="replace").split()
        except (ConnectionError, OSError):
            hello = []
        rank = int(hello[1]) if len(hello) == 2 and hello[0] == "rank" and hello[1].isdigit() else -1
        if not 0 < rank < nnodes or rank in link.peers or everyone.done():
            writer.close()  # not a rank of this world (or a second rank R): refused as torch's store would
            return
        link.peers[rank] = (reader, writer)
        if len(link.peers) == nnodes - 1 and not everyone.done():
            everyone.set_result(None)

    try:
        link._server = await asyncio.start_server(on_join, addr.host, addr.port, reuse_address=True)
    except OSError as err:
        log.line(f"torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                 f"network address. port: {addr.port}, useIpv6: false, code: -{err.errno}, name: "
                 f"{errno.errorcode.get(err.errno or 0, 'EIO')}, message: {err.strerror}", important=True)
        raise ClusterError(str(err)) from err
    await everyone
    for _, writer in link.peers.values():
        writer.write(b"ok\n")
        await writer.drain()
    link._server.close()  # the world is complete: no one else may join
    link.watch()
    return link


def _c10d_warning(addr: DistAddr, err: OSError) -> str:
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int((now % 1) * 1e9):09d}"
    code = err.errno or errno.ECONNREFUSED
    return (f"[W{stamp} socket.cpp:764] [c10d] The client socket has failed to connect to "
            f"[{addr.host}]:{addr.port} (errno: {code} - {os.strerror(code)}).")


async def join(addr: DistAddr, rank: int, log: SimLog) -> ClusterLink:
    """Rank > 0: connect to node 0 (retrying, with torch's warning once per failure kind) and wait for `ok`."""
    warned: set[int | None] = set()
    while True:
        try:
            reader, writer = await asyncio.open_connection(addr.host, addr.port)
        except OSError as err:
            if err.errno not in warned:
                warned.add(err.errno)
                log.raw(_c10d_warning(addr, err))
            await asyncio.sleep(RETRY_S)
            continue
        writer.write(f"rank {rank}\n".encode())
        await writer.drain()
        try:
            answer = await reader.readline()
        except (ConnectionError, OSError):
            answer = b""
        if answer.strip() == b"ok":
            link = ClusterLink(rank=rank, peers={0: (reader, writer)})
            link.watch()
            return link
        writer.close()  # refused (the world is full or the rank is taken): try again as torch's client does
        await asyncio.sleep(RETRY_S)


async def rendezvous(nnodes: int, node_rank: int, dist_init_addr: str | None, log: SimLog) -> ClusterLink | None:
    """None for one node; otherwise this node's link once every rank has joined (node 0 gathers, others join)."""
    if nnodes <= 1 or dist_init_addr is None:
        return None
    addr = DistAddr.parse(dist_init_addr)
    if node_rank == 0:
        return await gather(addr, nnodes, log)
    return await join(addr, node_rank, log)
