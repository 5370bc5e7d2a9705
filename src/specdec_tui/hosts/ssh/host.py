"""`SSHHost`: the real remote host — one long-lived asyncssh connection to a machine running the unit
under systemd. Commands, SFTP and the journal share that connection; it is re-opened when it drops.

Opening it (~/.ssh/config, known-hosts policy, sudo probe) lives in `hosts.ssh_connect`; the resumable
journal follow in `hosts.ssh_journal`. Every remote command comes from `hosts.commands` (validated, quoted).
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from pathlib import PurePosixPath

import asyncssh

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts import commands as rc
from specdec_tui.hosts.base import (
    GpuFact,
    HostInfo,
    JournalRecord,
    PushResult,
    PythonRun,
    RestartResult,
    ServiceStatus,
    StagedPush,
)
from specdec_tui.hosts.errors import ConnectionLost, HostError, PrivilegeError, UnitRejected
from specdec_tui.hosts.ssh.connect import KEEPALIVE_INTERVAL_S, SUDO_PASSWORD_RE, RemoteResult, SSHConnector, run_on
from specdec_tui.hosts.ssh.journal import JournalFollow, parse_journal_line
from specdec_tui.hosts.ssh.systemctl_text import job_result_from, parse_gpu_csv, parse_show
from specdec_tui.hosts.unit_text import decode_unit

__all__ = ["SSHHost", "job_result_from", "parse_gpu_csv", "parse_journal_line", "parse_show"]
PYTHON_PROBE_TIMEOUT_S = 60.0  # importing sglang's argument modules takes a few seconds on a real host


class SSHHost:
    """Drives `config.unit` on `config.address` over SSH. Test hooks: `known_hosts`, `ssh_config`,
    `client_keys` and `agent_path` replace the ~/.ssh defaults; `reconnect_delays` shapes the backoff."""

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
        reconnect_delays: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0, 5.0, 5.0, 5.0, 5.0),
    ) -> None:
        rc.valid_unit_name(config.unit)
        rc.valid_path(config.resolved_unit_path)
        self.config = config
        self.connector = SSHConnector(
            config, known_hosts=known_hosts, ssh_config=ssh_config, client_keys=client_keys,
            agent_path=agent_path, keepalive_interval_s=keepalive_interval_s, jump=jump,
        )
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

    # --- connection --------------------------------------------------------------------------------
    async def connect(self) -> None:
        await self._connection()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()
        self.connector.close_jump()

    async def _connection(self) -> asyncssh.SSHClientConnection:
        async with self._connect_lock:
            if self._conn is not None and not self._conn.is_closed():
                return self._conn
            self._conn = None
            conn = await self.connector.open()
            try:
                self._is_root = await self.connector.is_root(conn)
                if not self._is_root and self.config.sudo:
                    await self.connector.require_sudo(conn)
            except BaseException:
                conn.close()  # a probe cut short (a Ctrl-C mid-connect): not ours yet, so no close() would reach it
                raise
            self._conn = conn
            return conn

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

    async def _run(self, command: rc.RemoteCommand, *, privileged: bool = True, check: bool = True, what: str = "") -> RemoteResult:
        for attempt in (1, 2):
            conn = await self._connection()  # first: it learns whether we are root
            final = self._privileged(command) if privileged else command
            try:
                result = await run_on(conn, final)
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
        if result.returncode != 0 and final.argv[:2] == ("sudo", "-n") and SUDO_PASSWORD_RE.search(
            result.stderr.decode(errors="replace")
        ):
            raise self.connector.sudo_error(result.stderr)
        if check and result.returncode != 0:
            err_text = result.stderr.decode(errors="replace").strip() or f"exit status {result.returncode}"
            raise HostError(f"{what or command.line} failed on {self.config.address}: {err_text}")
        return result

    # --- unit file ---------------------------------------------------------------------------------
    async def read_unit(self) -> str:
        result = await self._run(rc.cat(self.unit_path), check=False)
        if result.returncode == 0:
            return decode_unit(result.stdout, f"{self.unit_path} on {self.config.address}")
        shown = await self._run(rc.systemctl_cat(self.config.unit), check=False)
        if shown.returncode == 0:  # "# /path/of/unit\n<text>": drop systemctl's header line
            text = decode_unit(shown.stdout, f"{self.config.unit} on {self.config.address}")
            return text.split("\n", 1)[1] if "\n" in text else ""
        raise HostError(
            f"cannot read {self.unit_path} on {self.config.address}: {result.stderr.decode(errors='replace').strip()}",
            "check unit / unit_path in the host config",
        )

    async def _read_bytes(self, path: str) -> bytes | None:
        result = await self._run(rc.cat(path), check=False)
        return result.stdout if result.returncode == 0 else None

    async def read_file(self, path: str) -> bytes:
        data = await self._read_bytes(path)
        if data is None:
            raise HostError(f"cannot read {path} on {self.config.address} (absent or unreadable)")
        return data

    async def history(self) -> list[int]:
        result = await self._run(rc.list_dir(self.history_dir), check=False)
        pattern = re.compile(rf"^{re.escape(self.config.unit)}\.(\d+)$")
        found = [int(m.group(1)) for line in result.stdout.decode().splitlines() if (m := pattern.match(line))]
        return sorted(found)

    async def read_backup(self, number: int) -> str:
        data = await self._read_bytes(self._backup_path(number))
        if data is None:
            raise HostError(f"cannot read the backup {self._backup_path(number)} on {self.config.address}")
        return data.decode("utf-8", errors="replace")

    def _backup_path(self, n: int) -> str:
        return f"{self.history_dir}/{self.config.unit}.{n}"

    async def push(self, text: str) -> PushResult:
        return await self.commit(await self.prepare(text))

    async def prepare(self, text: str) -> StagedPush:
        """Stage `text` next to the unit and `systemd-analyze verify` it; the unit itself is not touched."""
        data = text.encode()
        if await self._read_bytes(self.unit_path) == data:
            return StagedPush(unit=self.config.unit, text=text, changed=False)
        try:
            await self._run(rc.mkdir_p(f"{self.history_dir}/new"), what="creating the unit history directory")
            await self._upload(data, self.staging_path)
            await self._verify_staged()
        except ConnectionLost as err:
            raise ConnectionLost(
                f"the SSH connection to {self.config.address} dropped while staging the unit: {err.message}",
                "the unit was not changed; push again",
            ) from err
        return StagedPush(unit=self.config.unit, text=text, changed=True)

    async def commit(self, staged: StagedPush) -> PushResult:
        """Back up the unit and rename the staged text over it (one atomic step on the host)."""
        if not staged.changed:
            return PushResult(unit=self.config.unit, changed=False)
        try:
            return await self._replace(staged.text.encode())
        except ConnectionLost as err:
            raise ConnectionLost(
                f"the SSH connection to {self.config.address} dropped during the push: {err.message}",
                "the unit is the old text or the new one, never a mix (it is replaced by a rename) — "
                "look at it (host cat) before pushing again",
            ) from err

    async def discard(self, staged: StagedPush) -> None:
        if staged.changed:
            await self._run(rc.remove(self.staging_path), check=False)

    async def _replace(self, data: bytes) -> PushResult:
        current = await self._read_bytes(self.unit_path)
        if current == data:  # a replace cut after its rename, then tried again
            await self._run(rc.remove(self.staging_path), check=False)
            return PushResult(unit=self.config.unit, changed=False)
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

    async def upload(self, name: str, data: bytes) -> str:
        """`data` as `name` beside the unit: staged in the unit's history directory (the same file system), then
        renamed over the file, so the server reading it at start sees the old file or the new, never half."""
        try:
            dest = rc.valid_path(f"{PurePosixPath(self.unit_path).parent}/{rc.valid_side_file(name)}")
        except ValueError as err:
            raise HostError(f"{name!r} was not uploaded: {err}") from None
        staging = rc.valid_path(f"{self.history_dir}/new/{name}")
        try:
            await self._run(rc.mkdir_p(f"{self.history_dir}/new"), what="creating the unit history directory")
            await self._upload(data, staging)
            await self._run(rc.rename(staging, dest), what=f"moving {name} beside the unit")
        except ConnectionLost as err:
            raise ConnectionLost(f"the SSH connection to {self.config.address} dropped while uploading {name}: "
                                 f"{err.message}", f"{dest} is the old file or the new one; upload again") from err
        return dest

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
        return decode_unit(data, f"{self.unit_path} on {self.config.address}")

    async def drop_backups(self, numbers: Sequence[int]) -> None:
        paths = [self._backup_path(number) for number in numbers]
        for start in range(0, len(paths), 200):  # a tune's 1,000 launches: a few commands, each well under ARG_MAX
            await self._run(rc.remove(*paths[start:start + 200]), what="dropping the backups of a finished task")

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

    async def run_python(self, python: str, source: bytes) -> PythonRun:
        """`python -` with `source` on stdin, as the SSH user (it only reads): the SGLang release probes."""
        conn = await self._connection()
        try:
            result = await asyncio.wait_for(run_on(conn, rc.cmd(python, "-"), stdin=source), PYTHON_PROBE_TIMEOUT_S)
        except TimeoutError:
            raise HostError(f"{python} on {self.config.address} did not answer in {PYTHON_PROBE_TIMEOUT_S:g} s") from None
        except (asyncssh.Error, OSError) as err:
            self._conn = None
            raise ConnectionLost(f"the SSH connection to {self.config.address} dropped: {err}", "try again") from err
        return PythonRun(result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace"))

    # --- journal -----------------------------------------------------------------------------------
    async def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None
    ) -> AsyncIterator[JournalRecord]:
        follow_ = JournalFollow(
            unit=self.config.unit, address=self.config.address, connection=self._connection,
            as_reader=self._privileged_or_plain, forget_closed=self._forget_closed,
            reconnect_delays=self.reconnect_delays,
        )
        # aclosing: closing this generator must end the remote journalctl now, as it did when inline.
        async with aclosing(follow_.records(after_cursor=after_cursor, follow=follow, lines=lines)) as records:
            async for record in records:
                yield record

    def _forget_closed(self) -> None:
        self._conn = None if self._conn is None or self._conn.is_closed() else self._conn

    def _privileged_or_plain(self, command: rc.RemoteCommand) -> rc.RemoteCommand:
        """journalctl works unprivileged for users in systemd-journal/adm; use sudo only if configured."""
        return command.with_sudo() if (self.config.sudo and not self._is_root) else command
