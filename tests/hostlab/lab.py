"""The test host: a real systemd booted as PID 1 of a private PID+mount namespace, and a real OpenSSH
sshd running inside it on 127.0.0.1:<free port>.

Everything systemd could write to is a private tmpfs inside the namespace (see init.sh, which checks
this before it execs systemd); the harness's own files live in /var/lib/specdec-hostlab-<pid>,
NOT in /tmp. Nothing is killed by name: processes are found and stopped by their PID.

The lab's units run this test process's python on this checkout, which may live under a directory the
lab hides (a clone in /tmp, a venv in /home/...): init.sh bind-mounts those directories, read-only and at
the same path, on top of the private mounts (`HostLab.visible`), and boot() checks that the python and
the package really are usable inside before any test runs, or says in words why not.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
INIT_SCRIPT = HERE / "init.sh"
VENDOR_UNITS = Path("/lib/systemd/system")
COPIED_UNITS = (
    "systemd-journald.service",
    "systemd-journald.socket",
    "systemd-journald-dev-log.socket",
    "systemd-journald-audit.socket",
    "systemd-poweroff.service",
)
# Minimal targets written from scratch: the machine's vendor targets pull in udev, tmpfiles, sysctl,
# remount-fs and friends, which must never run against the shared kernel and disk.
TARGETS = {
    "basic.target": "Wants=systemd-journald.socket systemd-journald-dev-log.socket systemd-journald.service\n",
    "sysinit.target": "",
    "sockets.target": "",
    "local-fs.target": "",
    "multi-user.target": "Requires=basic.target\nAfter=basic.target\n",
    "network.target": "",
    "network-online.target": "",
    "shutdown.target": "DefaultDependencies=no\n",
    "umount.target": "DefaultDependencies=no\n",
    "final.target": "DefaultDependencies=no\n",
    "poweroff.target": (
        "DefaultDependencies=no\nRequires=systemd-poweroff.service\nAfter=systemd-poweroff.service\n"
        "AllowIsolate=yes\n"
    ),
}
TEST_USER = "specdec-sudoer"  # sudo with a password: the panel must refuse, not hang
NOPASSWD_USER = "specdec-nopw"  # passwordless sudo: the panel's sudo path must work
TEST_UID = 64990
# A name only the lab resolves (its private /etc/hosts): reachable through the lab as a jump host, not directly.
INNER_NAME = "specdec-lab-inner"


class LabUnavailable(RuntimeError):
    """This machine cannot host the lab (not root, no sshd/unshare/systemd); the reason says which."""


def missing_requirements() -> str | None:
    """Why the lab cannot run here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root (to unshare a PID+mount namespace and run sshd)"
    for tool in ("/usr/sbin/sshd", "/lib/systemd/systemd", "/usr/bin/ssh-keygen"):
        if not os.access(tool, os.X_OK):
            return f"{tool} is not installed (see .ci/apt-packages.txt)"
    for tool in ("unshare", "nsenter", "findmnt", "systemctl", "journalctl"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def paths_a_unit_needs() -> list[Path]:
    """The directories a lab unit running `sys.executable` on this checkout reads: the checkout, the venv,
    the base python and every import path, as absolute paths (and their resolved form when a symlink
    differs), sorted. init.sh makes the ones it would hide visible inside the namespace."""
    found: set[Path] = set()
    exe = Path(os.path.abspath(sys.executable))
    for p in (REPO, Path(sys.prefix), Path(sys.exec_prefix), Path(sys.base_prefix), exe.parent,
              Path(os.path.realpath(exe)).parent, *(Path(e) for e in sys.path if e)):
        for q in {Path(os.path.abspath(p)), Path(os.path.realpath(p))}:
            if q.is_dir():
                found.add(q)
    return sorted(found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children(pid: int) -> list[int]:
    """Direct children of `pid` (all threads), from /proc."""
    out: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        for task in task_dir.iterdir():
            text = (task / "children").read_text()
            out += [int(p) for p in text.split()]
    except OSError:
        return []
    return out


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"hostlab: timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


@dataclass
class HostLab:
    """One booted test host. `root_dir` holds keys, configs and the machine-side copies of files."""

    root_dir: Path = field(default_factory=lambda: Path(f"/var/lib/specdec-hostlab-{os.getpid()}"))
    # Directories of the machine the lab's units must see at the same path (read-only): see init.sh.
    visible: list[Path] = field(default_factory=paths_a_unit_needs)
    ssh_port: int = 0
    init_pid: int | None = None  # the namespace's PID 1, as seen from the machine
    _unshare: subprocess.Popen | None = None
    _sshd: subprocess.Popen | None = None
    sshd_pid: int | None = None
    cgroup: str = ""

    # --- files -----------------------------------------------------------------------------------
    @property
    def client_key(self) -> Path:
        return self.root_dir / "client_ed25519"

    @property
    def host_key(self) -> Path:
        return self.root_dir / "ssh_host_ed25519_key"

    @property
    def known_hosts(self) -> Path:
        return self.root_dir / "known_hosts"

    @property
    def ssh_config(self) -> Path:
        return self.root_dir / "ssh_config"

    def host_key_line(self) -> str:
        """The known_hosts line for the lab's sshd (what ssh-keyscan would print)."""
        pub = (self.host_key.with_suffix(".pub")).read_text().split()
        return f"[127.0.0.1]:{self.ssh_port} {pub[0]} {pub[1]}\n"

    def _prepare(self) -> None:
        if self.root_dir.exists():
            shutil.rmtree(self.root_dir)
        self.root_dir.mkdir(parents=True, mode=0o700)
        units = self.root_dir / "units"
        units.mkdir()
        for name in COPIED_UNITS:
            shutil.copy2(VENDOR_UNITS / name, units / name)
        for name, body in TARGETS.items():
            (units / name).write_text(f"[Unit]\nDescription=hostlab {name}\n{body}")
        (units / "default.target").symlink_to("multi-user.target")
        (self.root_dir / "visible").write_text("".join(f"{p}\n" for p in self.visible))
        for key in (self.host_key, self.client_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        (self.root_dir / "authorized_keys").write_text(self.client_key.with_suffix(".pub").read_text())
        self._prepare_users()
        self.ssh_port = free_port()
        (self.root_dir / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1:{self.ssh_port}\n"
            f"HostKey {self.host_key}\n"
            f"AuthorizedKeysFile {self.root_dir}/authorized_keys\n"
            f"PidFile none\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "Subsystem sftp internal-sftp\nLogLevel ERROR\n"
            "MaxSessions 50\nMaxStartups 50\n"
        )
        self.ssh_config.write_text(
            f"Host hostlab\n  HostName 127.0.0.1\n  Port {self.ssh_port}\n  User root\n"
            f"  IdentityFile {self.client_key}\n"
        )
        self.known_hosts.write_text("")

    def _prepare_users(self) -> None:
        """A test user with a password-requiring sudo entry, in private copies bind-mounted inside."""
        etc = self.root_dir / "etc"
        home = self.root_dir / "home"
        etc.mkdir()
        for name in ("passwd", "group", "shadow"):
            shutil.copy2(f"/etc/{name}", etc / name)
        for uid, user in enumerate((TEST_USER, NOPASSWD_USER), start=TEST_UID):
            (home / user).mkdir(parents=True)
            os.chown(home / user, uid, uid)
            with open(etc / "passwd", "a") as f:
                f.write(f"{user}:x:{uid}:{uid}::/home/{user}:/bin/sh\n")
            with open(etc / "group", "a") as f:
                f.write(f"{user}:x:{uid}:\n")
            with open(etc / "shadow", "a") as f:  # locked password: key login only
                f.write(f"{user}:*:19000:0:99999:7:::\n")
        if Path("/etc/sudoers").exists():
            sudoers = etc / "sudoers"
            sudoers.write_text(
                f"root ALL=(ALL:ALL) ALL\n{TEST_USER} ALL=(ALL:ALL) ALL\n{NOPASSWD_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n"
            )
            sudoers.chmod(0o440)
        machine_hosts = Path("/etc/hosts").read_text() if Path("/etc/hosts").exists() else ""
        (etc / "hosts").write_text(f"{machine_hosts.rstrip()}\n127.0.0.1 {INNER_NAME}\n".lstrip())
        os.chown(self.root_dir, 0, 0)
        self.root_dir.chmod(0o711)  # the test user's sshd must reach authorized_keys

    # --- lifecycle ---------------------------------------------------------------------------------
    def boot(self, timeout: float = 40.0) -> None:
        reason = missing_requirements()
        if reason:
            raise LabUnavailable(reason)
        self._prepare()
        self.cgroup = self.root_dir.name  # specdec-hostlab-<pid>[-suffix]: one per lab, never shared
        for hierarchy in ("systemd", "unified"):
            base = Path("/sys/fs/cgroup") / hierarchy
            if base.is_dir():
                (base / self.cgroup).mkdir(exist_ok=True)
        (self.root_dir / "cgroup").write_text(self.cgroup)
        console = open(self.root_dir / "console.log", "wb")
        self._unshare = subprocess.Popen(
            ["unshare", "--pid", "--fork", "--mount", "--mount-proc", str(INIT_SCRIPT), str(self.root_dir)],
            stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True,
        )
        console.close()

        def init_pid() -> int | None:
            if self._unshare.poll() is not None:
                raise LabUnavailable(f"the namespace exited at once: {self.console_tail()}")
            return (children(self._unshare.pid) or [None])[0]

        self.init_pid = wait_for(init_pid, 10, "the namespace's PID 1")
        try:
            wait_for(self._is_running, timeout, "systemd to reach running/degraded", interval=0.2)
        except TimeoutError as err:
            raise LabUnavailable(f"{err}; console: {self.console_tail()}") from err
        self._check_python()
        self._start_sshd()

    def _check_python(self) -> None:
        """The lab's units run this python on this checkout: make sure they can, inside, before any
        test waits for a unit that could never start."""
        check = self.run(["env", f"PYTHONPATH={REPO / 'src'}", sys.executable, "-c",
                          f"import os, specdec_tui; os.chdir({str(REPO)!r})"], check=False)
        if check.returncode != 0:
            raise LabUnavailable(
                f"inside the lab host, {sys.executable} cannot import specdec_tui from {REPO} "
                f"(directories init.sh was asked to show there: {', '.join(map(str, self.visible))}): "
                f"{(check.stderr or check.stdout).strip()[-600:]}"
            )

    def _is_running(self) -> bool:
        if self._unshare is not None and self._unshare.poll() is not None:
            raise LabUnavailable(f"the namespace exited early: {self.console_tail()}")
        out = self.run(["systemctl", "is-system-running"], check=False).stdout.strip()
        return out in ("running", "degraded")

    def console_tail(self, n: int = 20) -> str:
        try:
            return " | ".join((self.root_dir / "console.log").read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no console log)"

    def nsenter(self, argv: list[str]) -> list[str]:
        return ["nsenter", "-t", str(self.init_pid), "-m", "-p", "--", *argv]

    def run(self, argv: list[str], check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        """Runs a command inside the namespace (sees its systemd, its /run, its /tmp)."""
        return subprocess.run(self.nsenter(argv), capture_output=True, text=True, check=check, input=input, timeout=30)

    def _start_sshd(self) -> None:
        self._sshd = subprocess.Popen(
            self.nsenter(["/usr/sbin/sshd", "-D", "-e", "-f", str(self.root_dir / "sshd_config")]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.root_dir / "sshd.log", "wb"),
        )
        self.sshd_pid = wait_for(lambda: (children(self._sshd.pid) or [None])[0], 10, "sshd to start")

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.ssh_port), timeout=0.5).close()
                return True
            except OSError:
                return False

        wait_for(listening, 10, f"sshd on 127.0.0.1:{self.ssh_port}")

    def freeze_sshd(self) -> None:
        """Stops the listening sshd (SIGSTOP): new connections get a TCP handshake and then silence."""
        assert self.sshd_pid is not None
        os.kill(self.sshd_pid, signal.SIGSTOP)

    def thaw_sshd(self) -> None:
        """Continues the listening sshd, and nsenter above it: nsenter stops itself when its child stops
        (job-control mimicry) and would otherwise never reap sshd at shutdown."""
        assert self.sshd_pid is not None and self._sshd is not None
        os.kill(self.sshd_pid, signal.SIGCONT)
        os.kill(self._sshd.pid, signal.SIGCONT)

    def session_pids(self) -> list[int]:
        """The sshd processes serving live connections (children of the listening sshd), by PID."""
        return children(self.sshd_pid) if self.sshd_pid else []

    def shutdown(self, timeout: float = 20.0) -> None:
        if self._sshd is not None and self.sshd_pid:
            try:
                os.kill(self.sshd_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self._sshd.wait(timeout=10)
        if self._unshare is not None and self._unshare.poll() is None:
            subprocess.run(self.nsenter(["systemctl", "poweroff", "--no-block"]), capture_output=True, timeout=30)
            try:
                self._unshare.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                if self.init_pid:  # PID 1 of the namespace, by PID: takes the whole namespace with it
                    os.kill(self.init_pid, signal.SIGKILL)
                self._unshare.wait(timeout=10)
        self._remove_cgroups()
        shutil.rmtree(self.root_dir, ignore_errors=True)

    def _remove_cgroups(self) -> None:
        for hierarchy in ("systemd", "unified"):
            base = Path("/sys/fs/cgroup") / hierarchy / self.cgroup
            if not self.cgroup or not base.is_dir():
                continue
            for dirpath, _dirs, _files in sorted(os.walk(base), key=lambda t: -len(t[0])):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass
