"""Real SSH peers on 127.0.0.1 for tests of what opens and closes connections, without the systemd lab:
`LoopbackSSH` is asyncssh's own server (real key exchange, public-key login as root, every command answered
"0" as `id -u` answers for root) counting the connections it holds; `SilentPeer` accepts and never speaks
(an SSH connect to it hangs until its timeout or a cancel)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncssh

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts.ssh.host import SSHHost


class _Counted(asyncssh.SSHServer):
    def __init__(self, server: LoopbackSSH) -> None:
        self.server = server

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.server.open += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.open -= 1
        self.server.changed.set()


class LoopbackSSH:
    """An SSH server on loopback; `open` is the number of client connections it holds now. `answer=False`: every
    command hangs unanswered (a connect then waits in its post-login probe); `asked` is set at the first command."""

    def __init__(self, root: Path, *, answer: bool = True) -> None:
        self.root = root
        self.answer = answer
        self.asked = asyncio.Event()
        self.open = 0
        self.changed = asyncio.Event()
        self.port = 0
        self._server: asyncssh.SSHAcceptor | None = None

    async def start(self) -> LoopbackSSH:
        self.root.mkdir(parents=True, exist_ok=True)
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        client_key = asyncssh.generate_private_key("ssh-ed25519")
        client_key.write_private_key(str(self.root / "id_ed25519"))
        (self.root / "authorized_keys").write_bytes(client_key.export_public_key())

        async def answer(process: asyncssh.SSHServerProcess[bytes]) -> None:
            self.asked.set()
            if not self.answer:
                await process.stdin.read()  # until the client goes
            process.stdout.write(b"0\n")
            process.exit(0)

        self._server = await asyncssh.create_server(
            lambda: _Counted(self), "127.0.0.1", 0, server_host_keys=[host_key], encoding=None,
            authorized_client_keys=str(self.root / "authorized_keys"), process_factory=answer)
        self.port = self._server.sockets[0].getsockname()[1]
        with (self.root / "known_hosts").open("ab") as known:
            known.write(f"[127.0.0.1]:{self.port} ".encode() + host_key.export_public_key())
        return self

    async def wait_open(self, count: int, timeout: float = 10.0) -> None:
        async def reached() -> None:
            while self.open != count:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(reached(), timeout)

    def host(self, name: str, port: int | None = None, connect_timeout_s: float = 10.0) -> SSHHost:
        """An SSHHost that logs in here (or, with `port`, tries 127.0.0.1:`port` with the same keys)."""
        config = HostConfig(name=name, address="127.0.0.1", port=port or self.port, user="root",
                            connect_timeout_s=connect_timeout_s)
        return SSHHost(config, known_hosts=self.root / "known_hosts", ssh_config=self.root / "no-ssh-config",
                       client_keys=[self.root / "id_ed25519"], agent_path=None)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


class SilentPeer:
    """Accepts TCP connections on loopback and never answers; `accepted` is set at the first, `ended` when a
    client closes its end."""

    def __init__(self) -> None:
        self.accepted = asyncio.Event()
        self.ended = asyncio.Event()
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> SilentPeer:
        async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self._writers.append(writer)
            self.accepted.set()
            await reader.read()  # b"" once the client closes
            self.ended.set()

        self._server = await asyncio.start_server(hold, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
