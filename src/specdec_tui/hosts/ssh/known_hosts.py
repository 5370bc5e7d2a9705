"""~/.ssh/known_hosts read strictly: a file that cannot be read whole is reported (with the line that fails) and
never written, and a host that any line names — even a line whose key asyncssh cannot read — is never "unknown".

asyncssh raises on one malformed line (a lone word, a bad @marker); read as empty, a CHANGED key would look
unknown and `accept_new_host_key` would append it, after which plain OpenSSH connects without a word.
"""

from __future__ import annotations

from pathlib import Path

import asyncssh

from specdec_tui.core.terminal_codes import terminal_safe
from specdec_tui.hosts.errors import HostKeyError

# Any key asyncssh reads, put in place of a line's own key to learn which hosts the line names.
_PROBE_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINU0ollaDZitCruXNuRK61NgNP7AwrVtOGB8Pc1QBj1y"


def load_known_hosts(path: Path) -> asyncssh.SSHKnownHosts:
    """The file's entries; empty when there is no file. HostKeyError when it cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except FileNotFoundError:
        return asyncssh.import_known_hosts("")
    except (OSError, UnicodeDecodeError) as err:
        raise HostKeyError(f"cannot read {path}: {terminal_safe(str(err))}; refusing to connect",
                           "fix its permissions or encoding; specdec-tui neither trusts nor writes it until then") from None
    try:
        return asyncssh.import_known_hosts(text)
    except ValueError:
        number = _first_bad_line(text)
        raise HostKeyError(
            f"{path}:{number}: this known_hosts line cannot be read, so no host key in the file can be trusted; "
            "refusing to connect",
            f"fix or delete line {number} (check with `ssh-keygen -l -f {path}`); specdec-tui will not add keys to "
            "the file until then") from None


def _first_bad_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            asyncssh.import_known_hosts(line)
        except ValueError:
            return number
    return 0


def names_host(path: Path, host: str, addr: str, port: int | None) -> bool:
    """Whether any line of the file is for this host (its key readable by asyncssh or not)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: assume it may name the host, so nothing is added
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        marker = words[0] if words[0].startswith("@") else None
        pattern_at = 1 if marker else 0
        if len(words) <= pattern_at:
            return True  # a line this short was refused by load_known_hosts anyway
        probe = " ".join([*(words[:1] if marker else []), words[pattern_at], _PROBE_KEY])
        try:
            matched = asyncssh.import_known_hosts(probe).match(host, addr, port)
        except ValueError:
            return True
        if any(matched):
            return True
    return False
