"""`SSHHost`: the real remote host — one long-lived asyncssh connection to a machine running the unit
under systemd. Commands, SFTP and the journal share that connection; it is re-opened when it drops.

OpenSSH conventions: ~/.ssh/config (aliases, HostName, Port, User, IdentityFile, ProxyJump), the
ssh-agent and ~/.ssh/known_hosts. Unknown or changed host keys are refused with what to do about it;
`accept_new_host_key` adds an UNKNOWN key (never replaces a changed one). Every remote command comes
from `hosts.commands` (validated, quoted).
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import AsyncIterator

import asyncssh
import orjson

from specdec_tui.core.config import HostConfig
from specdec_tui.core.redact import redact_text
from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.base import (
    ConnectionLost,
    GpuFact,
    HostError,
    HostInfo,
    HostKeyError,
    JournalRecord,
    PrivilegeError,
    PushResult,
    RestartResult,
    ServiceStatus,
    UnitRejected,
)

DEFAULT_SSH_DIR = Path("~/.ssh")
_SUDO_PASSWORD_RE = re.compile(r"password is required|a terminal is required|no tty present|askpass", re.I)
_RECONNECT_ERRORS = (asyncssh.Error, OSError, ConnectionLost, asyncio.IncompleteReadError)


class SSHHost:
    """Drives `config.unit` on `config.address` over SSH. Test hooks: `known_hosts`, `ssh_config`,
    `client_keys` and `agent_path` replace the ~/.ssh defaults; `reconnect_delays` shapes the backoff."""

    def __init__(
        self,
        config: HostConfig,
        *,
        known_hosts: str | os.PathLike | None = None,
        ssh_config: str | os.PathLike | None = None,
        client_keys: list[str | os.PathLike] | None = None,
        agent_path: str | None = "default",
        keepalive_interval_s: float = 15.0,
        reconnect_delays: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0, 5.0, 5.0, 5.0, 5.0),
    ) -> None:
        rc.valid_unit_name(config.unit)
        rc.valid_path(config.resolved_unit_path)
        self.config = config
        self.known_hosts = Path(known_hosts or DEFAULT_SSH_DIR / "known_hosts").expanduser()
        default_config = (DEFAULT_SSH_DIR / "config").expanduser()
        self.ssh_config = Path(ssh_config).expanduser() if ssh_config else default_config
        self.client_keys = [str(Path(k).expanduser()) for k in client_keys] if client_keys else None
        self.agent_path = agent_path
        self.keepalive_interval_s = keepalive_interval_s
        self.reconnect_delays = reconnect_delays
        unit_path = PurePosixPath(config.resolved_unit_path)
        self.unit_path = str(unit_path)
        self.history_dir = str(unit_path.parent / ".specdec")
        self.staging_path = f"{self.history_dir}/new/{config.unit}"
        self.info = HostInfo(
            name=config.name, kind="ssh", address=config.address, unit=config.unit,
            unit_path=self.unit_path, base_url=config.base_url,
            extra={"port": str(config.port or ""), "user": config.user or "", "sudo": str(config.sudo).lower()},
        )
        self._conn: asyncssh.SSHClientConnection | None = None
        self._connect_lock = asyncio.Lock()
        self._is_root = False
        self._last_match: tuple[str, str, int | None, bool] | None = None  # host, addr, port, key known?

    # --- connection --------------------------------------------------------------------------------
    async def connect(self) -> None:
        await self._connection()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()

    async def _connection(self) -> asyncssh.SSHClientConnection:
        async with self._connect_lock:
            if self._conn is not None and not self._conn.is_closed():
                return self._conn
            self._conn = None
            conn = await self._open()
            self._is_root = (await self._run_on(conn, rc.cmd("id", "-u"))).stdout.strip() == b"0"
            if not self._is_root and self.config.sudo:
                probe = await self._run_on(conn, rc.cmd("true").with_sudo())
                if probe.returncode != 0:
                    conn.close()
                    raise self._sudo_error(probe.stderr)
            self._conn = conn
            return conn

    def _connect_options(self) -> dict:
        opts: dict = {
            "known_hosts": self._match_known_hosts,
            "keepalive_interval": self.keepalive_interval_s,
            "keepalive_count_max": 3,
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
        return opts

    def _match_known_hosts(self, host: str, addr: str, port: int | None):
        """asyncssh asks this with the resolved host/address/port; remembering whether any key was on
        file lets the error say 'unknown' or 'CHANGED'."""
        try:
            known = asyncssh.read_known_hosts(str(self.known_hosts))
        except (OSError, ValueError):
            known = asyncssh.import_known_hosts("")
        result = known.match(host, addr, port)
        self._last_match = (host, addr, port, bool(result[0] or result[1]))
        return result

    async def _open(self) -> asyncssh.SSHClientConnection:
        address = self.config.address
        try:
            return await asyncssh.connect(address, **self._connect_options())
        except asyncssh.HostKeyNotVerifiable as err:
            host, _addr, port, was_known = self._last_match or (address, "", self.config.port, False)
            if was_known:
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
        except (OSError, asyncio.TimeoutError, asyncssh.Error) as err:
            raise HostError(f"cannot reach {address} over SSH: {err}", "check the address, port and network") from err

    async def _open_after_accept(self) -> asyncssh.SSHClientConnection:
        try:
            return await asyncssh.connect(self.config.address, **self._connect_options())
        except asyncssh.HostKeyNotVerifiable as err:
            raise HostKeyError(f"the host key of {self.config.address} changed while it was being added") from err

    async def _add_new_host_key(self, host: str, port: int | None) -> None:
        """Fetches the key the way the real connection would go (alias, ProxyJump from the config)."""
        opts = {k: v for k, v in self._connect_options().items() if k in ("config", "port")}
        try:
            key = await asyncio.wait_for(
                asyncssh.get_server_host_key(self.config.address, **opts), self.config.connect_timeout_s
            )
        except (OSError, asyncio.TimeoutError, asyncssh.Error) as err:
            raise HostError(f"cannot fetch the host key of {host}: {err}") from err
        if key is None:
            raise HostKeyError(f"{host} presented no host key to add")
        name = f"[{host}]:{port}" if port and port != 22 else host
        self.known_hosts.parent.mkdir(parents=True, exist_ok=True)
        with open(self.known_hosts, "ab") as f:
            f.write(f"{name} ".encode() + key.export_public_key("openssh").strip() + b"\n")

    # --- running commands --------------------------------------------------------------------------
    def _privileged(self, command: rc.RemoteCommand) -> rc.RemoteCommand:
        if self._is_root:
            return command
        if self.config.sudo:
            return command.with_sudo()
        raise PrivilegeError(
            f"{self.config.user or 'the SSH user'} on {self.config.address} is not root and sudo is off",
            f"connect as root or set sudo = true for host {self.config.name!r}",
        )

    def _sudo_error(self, stderr: bytes) -> PrivilegeError:
        text = stderr.decode(errors="replace").strip()
        if _SUDO_PASSWORD_RE.search(text):
            return PrivilegeError(
                f"sudo on {self.config.address} needs a password for {self.config.user or 'this user'}",
                "allow passwordless sudo (NOPASSWD) for this user, or connect as root",
            )
        return PrivilegeError(f"sudo on {self.config.address} refused: {text or 'no reason given'}")

    @staticmethod
    async def _run_on(conn, command: rc.RemoteCommand, stdin: bytes | None = None):
        result = await conn.run(command.line, input=stdin, encoding=None, check=False)
        result.returncode = result.exit_status if result.exit_status is not None else 255
        return result

    async def _run(self, command: rc.RemoteCommand, *, privileged: bool = True, check: bool = True, what: str = ""):
        for attempt in (1, 2):
            conn = await self._connection()  # first: it learns whether we are root
            final = self._privileged(command) if privileged else command
            try:
                result = await self._run_on(conn, final)
                break
            except asyncssh.ChannelOpenError as err:
                # The cached connection was already dead: the command never started, so one retry
                # on a fresh connection is safe (a status() right after a drop must still answer).
                self._conn = None
                if attempt == 2:
                    raise ConnectionLost(f"the SSH connection to {self.config.address} dropped: {err}", "try again") from err
            except (asyncssh.Error, OSError) as err:
                self._conn = None
                raise ConnectionLost(f"the SSH connection to {self.config.address} dropped: {err}", "try again") from err
        if result.exit_status is None and result.exit_signal is None:
            # The channel closed without an exit status: the link dropped mid-command. Not the command's
            # verdict — a cut during `systemd-analyze verify` must not read as "the unit was rejected".
            self._conn = None
            raise ConnectionLost(f"the SSH connection to {self.config.address} dropped while running "
                                 f"{what or final.argv[0]}", "try again")
        if result.returncode != 0 and final.argv[:2] == ("sudo", "-n") and _SUDO_PASSWORD_RE.search(
            result.stderr.decode(errors="replace")
        ):
            raise self._sudo_error(result.stderr)
        if check and result.returncode != 0:
            err_text = result.stderr.decode(errors="replace").strip() or f"exit status {result.returncode}"
            raise HostError(f"{what or command.line} failed on {self.config.address}: {err_text}")
        return result

    # --- unit file ---------------------------------------------------------------------------------
    async def read_unit(self) -> str:
        result = await self._run(rc.cat(self.unit_path), check=False)
        if result.returncode == 0:
            return result.stdout.decode()
        shown = await self._run(rc.systemctl_cat(self.config.unit), check=False)
        if shown.returncode == 0:  # "# /path/of/unit\n<text>": drop systemctl's header line
            return shown.stdout.decode().split("\n", 1)[1] if b"\n" in shown.stdout else ""
        raise HostError(
            f"cannot read {self.unit_path} on {self.config.address}: {result.stderr.decode(errors='replace').strip()}",
            "check unit / unit_path in the host config",
        )

    async def _read_bytes(self, path: str) -> bytes | None:
        result = await self._run(rc.cat(path), check=False)
        return result.stdout if result.returncode == 0 else None

    async def history(self) -> list[int]:
        result = await self._run(rc.list_dir(self.history_dir), check=False)
        pattern = re.compile(rf"^{re.escape(self.config.unit)}\.(\d+)$")
        found = [int(m.group(1)) for line in result.stdout.decode().splitlines() if (m := pattern.match(line))]
        return sorted(found)

    def _backup_path(self, n: int) -> str:
        return f"{self.history_dir}/{self.config.unit}.{n}"

    async def push(self, text: str) -> PushResult:
        data = text.encode()
        current = await self._read_bytes(self.unit_path)
        if current == data:
            return PushResult(unit=self.config.unit, changed=False)
        try:
            return await self._push_changed(data, current)
        except ConnectionLost as err:
            raise ConnectionLost(
                f"the SSH connection to {self.config.address} dropped during the push: {err.message}",
                "the unit is the old text or the new one, never a mix (it is replaced by a rename) — "
                "look at it (host cat) before pushing again",
            ) from err

    async def _push_changed(self, data: bytes, current: bytes | None) -> PushResult:
        await self._run(rc.mkdir_p(f"{self.history_dir}/new"), what="creating the unit history directory")
        await self._upload(data, self.staging_path)
        await self._verify_staged()
        backup = None
        if current is not None:
            numbers = await self.history()
            if numbers and await self._read_bytes(self._backup_path(numbers[-1])) == current:
                backup = numbers[-1]  # an interrupted push already saved it: no duplicate in the history
            else:
                backup = max(numbers, default=0) + 1
                await self._run(rc.copy_preserving(self.unit_path, self._backup_path(backup)), what="saving the backup")
        await self._run(rc.rename(self.staging_path, self.unit_path), what="replacing the unit")
        return PushResult(unit=self.config.unit, changed=True, backup=backup)

    async def _upload(self, data: bytes, dest: str) -> None:
        """Root writes straight to `dest` over SFTP; a sudo user uploads to a private temp dir and
        `sudo -n install`s it, since SFTP runs without sudo."""
        conn = await self._connection()
        target = dest if self._is_root else None
        if target is None:
            tmp_dir = (await self._run(rc.make_temp_dir(), privileged=False)).stdout.decode().strip()
            target = rc.valid_path(f"{tmp_dir}/{uuid.uuid4().hex}.unit")
        try:
            async with conn.start_sftp_client() as sftp:
                async with sftp.open(target, "wb") as f:
                    await f.write(data)
        except (asyncssh.Error, OSError) as err:
            raise HostError(f"uploading the unit to {target} failed: {err}") from err
        if target != dest:
            await self._run(rc.install_file(target, dest), what="installing the uploaded unit")
            await self._run(rc.remove(target), privileged=False, check=False)

    async def _verify_staged(self) -> None:
        has_analyze = await self._run(rc.has_program("systemd-analyze"), privileged=False, check=False)
        if has_analyze.returncode != 0:
            return
        verdict = await self._run(rc.analyze_verify(self.staging_path), check=False)
        if verdict.returncode != 0:
            await self._run(rc.remove(self.staging_path), check=False)
            why = (verdict.stderr or verdict.stdout).decode(errors="replace").strip()
            raise UnitRejected(
                f"systemd-analyze verify rejected the edited unit; nothing was changed: {why}",
                "fix the unit text and push again",
            )

    async def rollback(self) -> str:
        backups = await self.history()
        current = await self._read_bytes(self.unit_path)
        while True:
            if not backups:
                raise HostError(f"{self.config.unit} has no backup to roll back to on {self.config.address}")
            newest = self._backup_path(backups.pop())
            data = await self._read_bytes(newest)
            if data is None:
                raise HostError(f"cannot read the backup {newest}")
            if data != current:
                break
            # A push cut after its backup but before the rename left a copy of the current unit: skip it.
            await self._run(rc.remove(newest), what="dropping a backup identical to the unit")
        await self._run(rc.copy_preserving(newest, self.staging_path), what="staging the backup")
        await self._run(rc.rename(self.staging_path, self.unit_path), what="restoring the backup")
        await self._run(rc.remove(newest), what="dropping the restored backup")
        await self._run(rc.systemctl("daemon-reload"))
        return data.decode()

    # --- service -----------------------------------------------------------------------------------
    async def status(self) -> ServiceStatus:
        # Unprivileged `systemctl show` needs the system D-Bus; with sudo it uses systemd's private socket.
        await self._connection()
        show = self._privileged_or_plain(rc.systemctl_show(self.config.unit))
        result = await self._run(show, privileged=False, what="systemctl show")
        return parse_show(self.config.unit, result.stdout.decode())

    async def restart(self) -> RestartResult:
        await self._run(rc.systemctl("daemon-reload"), what="systemctl daemon-reload")
        result = await self._run(rc.systemctl("restart", self.config.unit), check=False)
        job = "done" if result.returncode == 0 else job_result_from(result.stderr.decode(errors="replace"))
        return RestartResult(job_result=job, status=await self.status())

    async def stop(self) -> None:
        await self._run(rc.systemctl("stop", self.config.unit), what="systemctl stop")

    async def gpu_facts(self) -> list[GpuFact]:
        if (await self._run(rc.has_program("nvidia-smi"), privileged=False, check=False)).returncode != 0:
            return []
        result = await self._run(rc.nvidia_smi_query(), privileged=False, check=False)
        return parse_gpu_csv(result.stdout.decode(errors="replace")) if result.returncode == 0 else []

    # --- journal -----------------------------------------------------------------------------------
    async def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        cursor = after_cursor
        failures = 0
        while True:
            try:
                conn = await self._connection()
                command = self._privileged_or_plain(
                    rc.journal(self.config.unit, after_cursor=cursor, lines=lines if cursor is None else None, follow=follow)
                )
                async with conn.create_process(command.line, encoding=None) as proc:
                    while True:
                        raw = await proc.stdout.readline()
                        if not raw:
                            break
                        record = parse_journal_line(raw)
                        if record is not None:
                            failures = 0
                            cursor = record.cursor
                            yield record
                    if not follow:
                        return
                    raise ConnectionLost("journalctl stopped")
            except (HostKeyError, PrivilegeError):
                raise
            except _RECONNECT_ERRORS as err:
                if failures >= len(self.reconnect_delays):
                    raise ConnectionLost(
                        f"lost the journal of {self.config.unit} on {self.config.address}: {err}", "reconnect later"
                    ) from err
                await asyncio.sleep(self.reconnect_delays[failures])
                failures += 1
                self._conn = None if self._conn is None or self._conn.is_closed() else self._conn
                if cursor is None and lines is not None:
                    lines = 0  # nothing seen yet: do not replay the tail after reconnecting
                try:
                    await self._connection()
                except HostError:
                    continue
                yield JournalRecord(
                    cursor=cursor or "", timestamp=datetime.now(timezone.utc), kind="gap",
                    message=f"connection to {self.config.address} lost ({err}); reconnected, resuming after the last line",
                )

    def _privileged_or_plain(self, command: rc.RemoteCommand) -> rc.RemoteCommand:
        """journalctl works unprivileged for users in systemd-journal/adm; use sudo only if configured."""
        return command.with_sudo() if (self.config.sudo and not self._is_root) else command


# --- parsing (pure) ------------------------------------------------------------------------------
def parse_show(unit: str, text: str) -> ServiceStatus:
    """`systemctl show -p …` (key=value lines, --timestamp=unix gives '@<seconds>') → ServiceStatus."""
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def as_int(key: str) -> int | None:
        try:
            return int(props.get(key, ""))
        except ValueError:
            return None

    main_pid = as_int("MainPID")
    return ServiceStatus(
        unit=unit,
        active_state=props.get("ActiveState", "unknown"),
        sub_state=props.get("SubState", ""),
        main_pid=main_pid or None,
        exec_main_status=as_int("ExecMainStatus"),
        n_restarts=as_int("NRestarts") or 0,
        active_enter=_parse_timestamp(props.get("ActiveEnterTimestamp", "")),
        result=props.get("Result", ""),
    )


def _parse_timestamp(value: str) -> datetime | None:
    value = value.strip()
    if value.startswith("@"):
        try:
            return datetime.fromtimestamp(float(value[1:]), tz=timezone.utc)
        except ValueError:
            return None
    return None


def job_result_from(stderr: str) -> str:
    """systemctl prints 'Job for X failed because …'; map it to systemd's job result words."""
    lowered = stderr.lower()
    for word in ("timeout", "canceled", "dependency"):
        if word in lowered:
            return word
    return "failed"


def parse_journal_line(raw: bytes) -> JournalRecord | None:
    """One `journalctl -o json` line → JournalRecord. MESSAGE may be a string, null or a byte array."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(entry, dict):  # a stray non-object line (`0`, `"x"`) must not end the journal stream
        return None
    message = entry.get("MESSAGE")
    if isinstance(message, list):
        message = bytes(b & 0xFF for b in message if isinstance(b, int)).decode(errors="replace")
    elif message is None:
        message = ""
    try:
        stamp = datetime.fromtimestamp(int(entry.get("__REALTIME_TIMESTAMP", 0)) / 1e6, tz=timezone.utc)
    except (TypeError, ValueError):
        stamp = datetime.now(timezone.utc)
    try:
        priority = int(entry.get("PRIORITY", 6))
    except (TypeError, ValueError):
        priority = 6
    pid = entry.get("_PID")
    return JournalRecord(
        cursor=str(entry.get("__CURSOR", "")),
        timestamp=stamp,
        message=redact_text(str(message)),  # SGLang logs its ServerArgs, api_key included
        priority=priority,
        pid=int(pid) if isinstance(pid, str) and pid.isdigit() else None,
    )


def parse_gpu_csv(text: str) -> list[GpuFact]:
    facts = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 5:
            continue
        try:
            facts.append(GpuFact(int(parts[0]), parts[1], float(parts[2]), float(parts[3]), float(parts[4])))
        except ValueError:
            continue
    return facts
