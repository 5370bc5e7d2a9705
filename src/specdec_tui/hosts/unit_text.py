"""A unit file's bytes as text: UTF-8 (what systemd reads), or a HostError that says where it is not.

A unit read from a host is decoded here, so a stray Latin-1 byte in a comment is reported in words (which file,
which byte, what to do) by `host cat`, `fleet status` and the panel alike, instead of a UnicodeDecodeError."""

from __future__ import annotations

from specdec_tui.hosts.errors import HostError


def decode_unit(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise HostError(f"{where} is not UTF-8 text: byte 0x{data[err.start]:02x} on line {line} "
                        f"(offset {err.start}); systemd reads unit files as UTF-8",
                        "re-save the file as UTF-8 on the host (e.g. `iconv -f latin1 -t utf-8`)") from None
