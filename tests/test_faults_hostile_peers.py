"""Peers that misbehave on purpose, on loopback, against `fleet status` as a user runs it (issue 36,
tracebacks): an SSH server that sends its banner then garbage (asyncssh's PacketDecodeError), one that accepts
and never speaks (a timed-out connect), host names no resolver takes (a label over 63 characters, `a..b`).
Each host's row says what went wrong in words; no traceback, and the other hosts' rows are still there."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.tmux_session import program

BANNER_THEN_GARBAGE = (b"SSH-2.0-OpenSSH_9.2p1\r\n"
                       b"\x00\x00\x00\x0c\x04\x14" + b"\x01" * 10)  # a KEXINIT cut short inside its packet


async def test_fleet_status_words_every_broken_peer_and_keeps_every_row(tmp_path: Path) -> None:
    async def garbage(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(BANNER_THEN_GARBAGE)
        await writer.drain()

    silent_peers: list[asyncio.StreamWriter] = []

    async def silent(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent_peers.append(writer)  # holds the connection open and says nothing

    garbage_server = await asyncio.start_server(garbage, "127.0.0.1", 0)
    silent_server = await asyncio.start_server(silent, "127.0.0.1", 0)
    garbage_port = garbage_server.sockets[0].getsockname()[1]
    silent_port = silent_server.sockets[0].getsockname()[1]
    config = tmp_path / "config.toml"
    config.write_text(f"""
[hosts.garbage]
address = "127.0.0.1"
port = {garbage_port}
[hosts.silent]
address = "127.0.0.1"
port = {silent_port}
connect_timeout_s = 1
[hosts.longlabel]
address = "{'a' * 64}.invalid"
[hosts.emptylabel]
address = "a..b"
""")
    env = {**os.environ, "HOME": str(tmp_path)}
    try:
        proc = await asyncio.create_subprocess_exec(
            *program(), "fleet", "status", "--config", str(config), "--json", "--timeout", "8",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        for server in (garbage_server, silent_server):
            server.close()
        for writer in silent_peers:
            writer.close()
    assert b"Traceback" not in out + err, err.decode()
    assert proc.returncode == 3, err.decode()  # 3: some host unreachable
    rows = {row["name"]: row for row in json.loads(out)}
    assert set(rows) == {"garbage", "silent", "longlabel", "emptylabel"}
    assert all(row["state"] == "unreachable" for row in rows.values()), rows
    assert "answered, but not as an SSH server should" in rows["garbage"]["detail"]
    assert "no answer within 1 s" in rows["silent"]["detail"]
    for name in ("longlabel", "emptylabel"):
        assert "is not a valid host name" in rows[name]["detail"], rows[name]
