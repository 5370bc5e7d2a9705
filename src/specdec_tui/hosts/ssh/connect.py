"""Opening one verified SSH connection the OpenSSH way, and learning what it may do.

~/.ssh/config (aliases, HostName, Port, User, IdentityFile, ProxyJump), the ssh-agent and
~/.ssh/known_hosts, plus the host table's `jump` (opened here with the same host-key policy and keys, so a
bastion's key is checked like any other). Keepalives notice a link that died without a FIN (a frozen peer, a
pulled cable) within KEEPALIVE_INTERVAL_S × (KEEPALIVE_COUNT_MAX + 1) = 12 s.
Unknown or changed host keys are refused with what to do about it;
`accept_new_host_key` adds an UNKNOWN key (never replaces a changed one); a known_hosts that cannot be read whole
is reported and never written (hosts.ssh.known_hosts). After login the connection is
probed for root and, if sudo is configured, for passwordless `sudo -n`.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

import asyncssh
from asyncssh.known_hosts import KnownHostsArg

from specdec_tui.core.config import HostConfig
from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.errors import ConnectionLost, HostError, HostKeyError, PrivilegeError
from specdec_tui.hosts.ssh.known_hosts import load_known_hosts, names_host

DEFAULT_SSH_DIR = Path("~/.ssh")
KEEPALIVE_INTERVAL_S = 4.0
KEEPALIVE_COUNT_MAX = 2  # unanswered keepalives before asyncssh closes the connection
SUDO_PASSWORD_RE = re.compile(r"password is required|a terminal is required|no tty present|askpass", re.I)


@dataclass
class RemoteResult:
    """A finished remote command, output as bytes. `returncode` is 255 when the channel closed without an
    exit status; `exit_status` and `exit_signal` are asyncssh's (both None: the link dropped mid-command)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    exit_status: int | None
    exit_signal: tuple[str, bool, str, str] | None


class SSHOptions(TypedDict, total=False):
    """The keyword arguments `SSHConnector.options` passes to asyncssh.connect."""

    known_hosts: KnownHostsArg
    keepalive_interval: float
    keepalive_count_max: int
    connect_timeout: float
    config: list[str]
    port: int
    username: str
    client_keys: list[str]
    agent_path: str | None
    tunnel: asyncssh.SSHClientConnection


class _HostKeyProbeOptions(TypedDict, total=False):
    """The options of `options()` that also shape asyncssh.get_server_host_key's connection."""

    config: list[str]
    port: int
    tunnel: asyncssh.SSHClientConnection


def _as_bytes(output: bytes | str | None) -> bytes:
    if isinstance(output, str):  # not with encoding=None; kept total for the type
        return output.encode()
    return output or b""


async def run_on(conn: asyncssh.SSHClientConnection, command: rc.RemoteCommand, stdin: bytes | None = None) -> RemoteResult:
    """Runs `command` on `conn` as bytes, never raising on a non-zero exit; `returncode` is 255 when
    the channel closed without an exit status."""
    result = await conn.run(command.line, input=stdin, encoding=None, check=False)
    return RemoteResult(
        returncode=result.exit_status if result.exit_status is not None else 255,
        stdout=_as_bytes(result.stdout),
        stderr=_as_bytes(result.stderr),
        exit_status=result.exit_status,
        exit_signal=result.exit_signal,
    )


class SSHConnector:
    """Opens connections to `config.address` with the host-key policy applied, and probes privileges.
    Test hooks: `known_hosts`, `ssh_config`, `client_keys` and `agent_path` replace the ~/.ssh defaults."""

    def __init__(
        self,
        config: HostConfig,
        *,
        known_hosts: str | os.PathLike[str] | None = None,
        ssh_config: str | os.PathLike[str] | None = None,
        client_keys: Sequence[str | os.PathLike[str]] | None = None,
        agent_path: str | None = "default",
        keepalive_interval_s: float = KEEPALIVE_INTERVAL_S,
        jump: HostConfig | None = None,
    ) -> None:
        self.config = config
        self.jump = jump
        self.jump_conn: asyncssh.SSHClientConnection | None = None
        self.known_hosts = Path(known_hosts or DEFAULT_SSH_DIR / "known_hosts").expanduser()
        default_config = (DEFAULT_SSH_DIR / "config").expanduser()
        self.ssh_config = Path(ssh_config).expanduser() if ssh_config else default_config
        self.client_keys = [str(Path(k).expanduser()) for k in client_keys] if client_keys else None
        self.agent_path = agent_path
        self.keepalive_interval_s = keepalive_interval_s
        self._last_match: tuple[str, str, int | None, bool] | None = None  # host, addr, port, key known?
        self._known_hosts_error: HostKeyError | None = None

    # --- options and host keys ---------------------------------------------------------------------
    def options(self) -> SSHOptions:
        # asyncssh types a known_hosts callable as returning Sequence[str]; it takes (and SSHKnownHosts.match
        # gives) the tuple of matching keys, CA keys and revoked keys.
        opts: SSHOptions = {
            "known_hosts": cast(KnownHostsArg, self._match_known_hosts),
            "keepalive_interval": self.keepalive_interval_s,
            "keepalive_count_max": KEEPALIVE_COUNT_MAX,
            "connect_timeout": self.config.connect_timeout_s,
        }
        if self.ssh_config.exists():
            opts["config"] = [str(self.ssh_config)]
        if self.config.port:
            opts["port"] = self.config.port
        if self.config.user:
            opts["username"] = self.config.user
        if self.client_keys is not None:
            opts["client_keys"] = self.client_keys
        elif self.config.identity_file:
            opts["client_keys"] = [str(Path(self.config.identity_file).expanduser())]
        if self.agent_path != "default":
            opts["agent_path"] = self.agent_path
        if self.jump_conn is not None:
            opts["tunnel"] = self.jump_conn
        return opts

    def _match_known_hosts(self, host: str, addr: str, port: int | None) -> tuple[object, ...]:
        """asyncssh asks this with the resolved host/address/port; remembering whether any key was on
        file lets the error say 'unknown' or 'CHANGED'."""
        try:
            known = load_known_hosts(self.known_hosts)
        except HostKeyError as err:  # open() reported it before connecting; the file changed since
            self._known_hosts_error = err
            known = asyncssh.import_known_hosts("")
        result = known.match(host, addr, port)
        self._last_match = (host, addr, port, bool(result[0] or result[1]))
        return result

    # --- opening -----------------------------------------------------------------------------------
    async def _open_jump(self) -> None:
        """(Re)opens the jump connection when there is one: same known_hosts, keys and agent as the target."""
        if self.jump is None or (self.jump_conn is not None and not self.jump_conn.is_closed()):
            return
        self.close_jump()
        via = SSHConnector(self.jump, known_hosts=self.known_hosts, ssh_config=self.ssh_config,
                           client_keys=self.client_keys,
                           agent_path=self.agent_path, keepalive_interval_s=self.keepalive_interval_s)
        try:
            self.jump_conn = await via.open()
        except HostError as err:
            raise type(err)(f"jump host {self.jump.address} (for {self.config.address}): {err.message}", err.hint) from err

    def close_jump(self) -> None:
        conn, self.jump_conn = self.jump_conn, None
        if conn is not None:
            conn.close()

    async def open(self) -> asyncssh.SSHClientConnection:
        address = self.config.address
        await self._open_jump()
        via = f" via jump host {self.jump.address}" if self.jump is not None else ""
        load_known_hosts(self.known_hosts)  # an unreadable file is reported here, before any connection
        self._known_hosts_error = None
        try:
            return await asyncssh.connect(address, **self.options())
        except asyncssh.HostKeyNotVerifiable as err:
            if self._known_hosts_error is not None:
                raise self._known_hosts_error from err
            host, addr, port, was_known = self._last_match or (address, "", self.config.port, False)
            # a line asyncssh could not read the key of still names the host: its key is not "unknown"
            if was_known or names_host(self.known_hosts, host, addr, port):
                raise HostKeyError(
                    f"the host key of {host}:{port or 22} has CHANGED since it was saved in {self.known_hosts}; "
                    "refusing to connect",
                    "this may be an attack or a reinstalled server: verify the new fingerprint with its "
                    "admin, then remove the old line (ssh-keygen -R) and add the new one",
                ) from err
            if not self.config.accept_new_host_key:
                target = f"-p {port} {host}" if port and port != 22 else host
                raise HostKeyError(
                    f"the host key of {host}:{port or 22} is unknown (not in {self.known_hosts}); refusing to connect",
                    f"verify its fingerprint, then run `ssh-keyscan {target} >> {self.known_hosts}`, "
                    f"or set accept_new_host_key = true for host {self.config.name!r}",
                ) from err
            await self._add_new_host_key(host, port)
            return await self._open_after_accept()
        except asyncssh.PermissionDenied as err:
            who = f"{self.config.user + '@' if self.config.user else ''}{address}"
            raise HostError(
                f"SSH login to {who} was refused", "check the user, IdentityFile/ssh-agent and authorized_keys"
            ) from err
        except (TimeoutError, OSError, asyncssh.Error, ValueError) as err:
            raise self.reach_error(err, via) from err

    def reach_error(self, err: Exception, via: str = "") -> HostError:
        """Why the connection could not be made, in words: a timeout says how long it waited, a peer that is
        not an SSH server (a banner then garbage: asyncssh's PacketDecodeError) and a malformed host name say so."""
        address = terminal_safe(self.config.address)
        if isinstance(err, UnicodeError):  # IDNA: a label over 63 characters, an empty label (`a..b`)
            return HostError(f"{address!r} is not a valid host name (a part between dots is empty or longer than "
                             "63 characters)", "fix the host's address in the config")
        if isinstance(err, ValueError):
            what = terminal_safe(str(err)) or "a malformed packet"
            return HostError(f"{address}{via} answered, but not as an SSH server should ({what})",
                             "check the port: something else may listen there")
        if isinstance(err, TimeoutError):
            reason = f"no answer within {self.config.connect_timeout_s:g} s"
        else:
            reason = terminal_safe(str(err)) or type(err).__name__
        return HostError(f"cannot reach {address} over SSH{via}: {reason}", "check the address, port and network")

    async def _open_after_accept(self) -> asyncssh.SSHClientConnection:
        try:
            return await asyncssh.connect(self.config.address, **self.options())
        except asyncssh.HostKeyNotVerifiable as err:
            raise HostKeyError(f"the host key of {self.config.address} changed while it was being added") from err
        except (TimeoutError, OSError, asyncssh.Error, ValueError) as err:
            raise self.reach_error(err) from err

    async def _add_new_host_key(self, host: str, port: int | None) -> None:
        """Fetches the key the way the real connection would go (alias, ProxyJump from the config)."""
        everything = self.options()
        opts: _HostKeyProbeOptions = {}
        if "config" in everything:
            opts["config"] = everything["config"]
        if "port" in everything:
            opts["port"] = everything["port"]
        if "tunnel" in everything:
            opts["tunnel"] = everything["tunnel"]
        try:
            key = await asyncio.wait_for(
                asyncssh.get_server_host_key(self.config.address, **opts), self.config.connect_timeout_s
            )
        except (TimeoutError, OSError, asyncssh.Error, ValueError) as err:
            raise HostError(f"cannot fetch the host key of {host}: {self.reach_error(err).message}") from err
        if key is None:
            raise HostKeyError(f"{host} presented no host key to add")
        name = f"[{host}]:{port}" if port and port != 22 else host
        known = load_known_hosts(self.known_hosts)  # read again just before writing: never append to a bad file
        if any(known.match(host, "", port)[:2]) or names_host(self.known_hosts, host, "", port):
            raise HostKeyError(f"the host key of {host}:{port or 22} is already in {self.known_hosts} (and differs); "
                               "refusing to add another", "verify the fingerprint, then fix the file by hand")
        self.known_hosts.parent.mkdir(parents=True, exist_ok=True)
        with open(self.known_hosts, "ab") as f:
            f.write(f"{name} ".encode() + key.export_public_key("openssh").strip() + b"\n")

    # --- privileges --------------------------------------------------------------------------------
    async def probe(self, conn: asyncssh.SSHClientConnection, command: rc.RemoteCommand) -> RemoteResult:
        """A post-login probe's result; ConnectionLost (words, the connection closed) when the link drops
        under it: an answer the link cut short is no answer (it read as "not root", or "sudo refused")."""
        try:
            result = await run_on(conn, command)
        except (asyncssh.Error, OSError) as err:
            conn.close()
            raise self.lost_after_login(str(err) or type(err).__name__) from err
        if result.exit_status is None and result.exit_signal is None:
            conn.close()
            raise self.lost_after_login(f"while running {command.argv[0]}")
        return result

    def lost_after_login(self, detail: str) -> ConnectionLost:
        return ConnectionLost(f"the SSH connection to {self.config.address} dropped right after login ({detail})",
                              "nothing was done on the host; try again")

    async def is_root(self, conn: asyncssh.SSHClientConnection) -> bool:
        return (await self.probe(conn, rc.cmd("id", "-u"))).stdout.strip() == b"0"

    async def require_sudo(self, conn: asyncssh.SSHClientConnection) -> None:
        """A non-root login with sudo configured must pass `sudo -n true`; else `conn` is closed and
        the PrivilegeError says why (a password is needed, or sudo refused)."""
        probe = await self.probe(conn, rc.cmd("true").with_sudo())
        if probe.returncode != 0:
            conn.close()
            raise self.sudo_error(probe.stderr)

    def sudo_error(self, stderr: bytes) -> PrivilegeError:
        text = stderr.decode(errors="replace").strip()
        if SUDO_PASSWORD_RE.search(text):
            return PrivilegeError(
                f"sudo on {self.config.address} needs a password for {self.config.user or 'this user'}",
                "allow passwordless sudo (NOPASSWD) for this user, or connect as root",
            )
        return PrivilegeError(f"sudo on {self.config.address} refused: {text or 'no reason given'}")
