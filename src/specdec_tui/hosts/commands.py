"""Remote shell commands built only from validated pieces.

Every command the SSH host runs goes through here: unit names must follow systemd's unit name
grammar, paths must be absolute and plain, and every argument is shlex-quoted. A bad piece is
refused with words *before* anything runs, so a unit called `x;rm -rf /` never reaches a shell.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from specdec_tui.hosts.errors import UnitRejected

UNIT_SUFFIXES = (
    "service", "socket", "target", "device", "mount", "automount", "swap", "timer", "path", "slice", "scope",
)
# systemd's unit name grammar (unit_name_is_valid): prefix of [A-Za-z0-9:_.\-], at most one '@'
# (template/instance), a known suffix, at most 255 characters in all.
_UNIT_RE = re.compile(
    r"^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]*)?\.(" + "|".join(UNIT_SUFFIXES) + r")$"
)
_PATH_RE = re.compile(r"^/[A-Za-z0-9._@:+\-/]*$")
_CURSOR_RE = re.compile(r"^[A-Za-z0-9=;_\-]+$")
SHOW_PROPERTIES = (
    "ActiveState", "SubState", "MainPID", "ExecMainStatus", "NRestarts", "ActiveEnterTimestamp", "Result",
)


def valid_unit_name(name: str) -> str:
    """Returns `name` when it is a systemd unit name; raises UnitRejected saying why not."""
    if not isinstance(name, str) or not name:
        raise UnitRejected("the unit name is empty", "name it like sglang.service")
    if len(name) > 255:
        raise UnitRejected(f"the unit name is {len(name)} characters long (systemd allows 255)")
    if not _UNIT_RE.fullmatch(name):
        raise UnitRejected(
            f"{name!r} is not a valid systemd unit name",
            "use letters, digits and : _ . - @ only, ending in a unit type such as .service",
        )
    return name


def valid_path(path: str) -> str:
    """Returns `path` when it is absolute and plain (no `..`, no spaces or shell characters)."""
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        raise ValueError(
            f"{path!r} is not a usable remote path: it must be absolute and use only letters, digits and ._@:+-/"
        )
    parts = path.split("/")
    if ".." in parts or "." in parts or "//" in path or (len(path) > 1 and path.endswith("/")):
        raise ValueError(f"{path!r} is not a plain absolute path (no '.', '..', '//' or trailing '/')")
    return path


_FILE_RE = re.compile(r"^[A-Za-z0-9_@:+\-][A-Za-z0-9._@:+\-]{0,200}$")


def valid_side_file(name: str) -> str:
    """Returns `name` when it is a plain file name that may sit beside a unit: no directory, not hidden, and not
    a unit (a file pushed this way must never be loaded by systemd as one)."""
    if not isinstance(name, str) or not _FILE_RE.fullmatch(name):
        raise ValueError(f"{name!r} is not a plain file name (letters, digits and ._@:+- only, not starting with '.')")
    if name.rsplit(".", 1)[-1] in UNIT_SUFFIXES or name.endswith((".d", ".wants", ".requires")):
        raise ValueError(f"{name!r} would be read by systemd as a unit or its drop-ins; name it e.g. NAME.json")
    return name


def valid_cursor(cursor: str) -> str:
    """Journal cursors are opaque but made of a known alphabet; anything else is refused."""
    if not isinstance(cursor, str) or not _CURSOR_RE.fullmatch(cursor):
        raise ValueError(f"{cursor!r} is not a journal cursor")
    return cursor


@dataclass(frozen=True, slots=True)
class RemoteCommand:
    """A remote command as an argv; `line` is the quoted text the remote shell receives."""

    argv: tuple[str, ...]

    @property
    def line(self) -> str:
        return shlex.join(self.argv)

    def with_sudo(self) -> RemoteCommand:
        """`sudo -n` never prompts: a password requirement fails at once instead of hanging."""
        return RemoteCommand(("sudo", "-n", "--", *self.argv))


def cmd(*argv: str) -> RemoteCommand:
    return RemoteCommand(tuple(argv))


def cat(path: str) -> RemoteCommand:
    return cmd("cat", "--", valid_path(path))


def systemctl_cat(unit: str) -> RemoteCommand:
    return cmd("systemctl", "cat", "--", valid_unit_name(unit))


def systemctl_show(unit: str) -> RemoteCommand:
    return cmd("systemctl", "show", "--timestamp=unix", "-p", ",".join(SHOW_PROPERTIES), "--", valid_unit_name(unit))


def systemctl(verb: str, unit: str | None = None) -> RemoteCommand:
    if verb not in ("daemon-reload", "restart", "start", "stop", "is-active"):
        raise ValueError(f"systemctl {verb!r} is not a command this panel runs")
    return cmd("systemctl", verb) if unit is None else cmd("systemctl", verb, "--", valid_unit_name(unit))


def analyze_verify(path: str) -> RemoteCommand:
    return cmd("systemd-analyze", "verify", "--", valid_path(path))


def has_program(name: str) -> RemoteCommand:
    if not re.match(r"^[A-Za-z0-9_.\-]+$", name):
        raise ValueError(f"{name!r} is not a program name")
    return cmd("sh", "-c", f"command -v {shlex.quote(name)}")


def mkdir_p(path: str) -> RemoteCommand:
    return cmd("mkdir", "-p", "--", valid_path(path))


def install_file(src: str, dst: str) -> RemoteCommand:
    """Copies exact bytes to `dst` with mode 0644 (used to move an upload into a root-owned dir)."""
    return cmd("install", "-m", "0644", "--", valid_path(src), valid_path(dst))


def copy_preserving(src: str, dst: str) -> RemoteCommand:
    return cmd("cp", "-p", "--", valid_path(src), valid_path(dst))


def rename(src: str, dst: str) -> RemoteCommand:
    """`mv -f` within one directory tree is a rename(2): readers see the old or the new file, never half."""
    return cmd("mv", "-f", "--", valid_path(src), valid_path(dst))


def remove(*paths: str) -> RemoteCommand:
    return cmd("rm", "-f", "--", *(valid_path(path) for path in paths))


def list_dir(path: str) -> RemoteCommand:
    return cmd("ls", "-1A", "--", valid_path(path))


def make_temp_dir() -> RemoteCommand:
    return cmd("mktemp", "-d", "-t", "specdec.XXXXXXXX")


def journal(unit: str, *, after_cursor: str | None, lines: int | None, follow: bool) -> RemoteCommand:
    """`journalctl -o json`; in follow mode wrapped so journalctl dies when the SSH channel closes:
    the wrapper waits for EOF on stdin (the channel) and then kills it, so nothing is left running."""
    # --all: without it `-o json` writes null for a field over 4096 bytes, and SGLang's server_args line (every
    # option of the release, ~16 KB in 0.5.23) would arrive empty
    argv = ["journalctl", "-u", valid_unit_name(unit), "-o", "json", "--all", "--no-pager"]
    if after_cursor is not None:
        argv.append(f"--after-cursor={valid_cursor(after_cursor)}")
    elif lines is not None:
        if not isinstance(lines, int) or lines < 0:
            raise ValueError(f"lines must be a whole number >= 0, not {lines!r}")
        argv += ["-n", str(lines)]
    if not follow:
        return RemoteCommand(tuple(argv))
    argv.append("-f")
    # fd 3 keeps the channel's stdin: background jobs of a non-interactive sh get /dev/null as stdin.
    script = (
        "exec 3<&0; "
        f"{shlex.join(argv)} </dev/null 3<&- & p=$!; "
        '(cat <&3 >/dev/null; kill "$p" 2>/dev/null) >/dev/null 2>&1 & '
        'exec 3<&-; wait "$p"'
    )
    return cmd("sh", "-c", script)


def nvidia_smi_query() -> RemoteCommand:
    return cmd(
        "nvidia-smi",
        "--query-gpu=index,name,memory.used,memory.total,utilization.gpu",
        "--format=csv,noheader,nounits",
    )
