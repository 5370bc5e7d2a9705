"""Which host an SSH connection jumps through: the host table's `jump` (ProxyJump), as another [hosts.NAME]
table or as `[user@]host[:port]`. (~/.ssh/config's own ProxyJump is applied by asyncssh when no `jump` is set.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from specdec_tui.core.config import HostConfig
from specdec_tui.hosts.errors import HostError


def resolve_jump(target: HostConfig, hosts: Mapping[str, HostConfig]) -> HostConfig | None:
    """The jump host's config for `target`, or None when it connects directly.

    A named table is used as it is (its port, user, key and host-key policy); a `[user@]host[:port]` spelling
    takes the target's key and host-key policy. A jump that itself jumps is refused: one hop is what the
    panel's connection owner opens and closes."""
    value = (target.jump or "").strip()
    if not value:
        return None
    if value == target.name:
        raise HostError(f"host {target.name!r} names itself as its jump host", "set jump to the bastion's name or address")
    named = hosts.get(value)
    if named is not None:
        if named.jump:
            raise HostError(
                f"jump host {value!r} of {target.name!r} has a jump host of its own ({named.jump!r})",
                "chain the hops in ~/.ssh/config (ProxyJump a,b) and name the alias as the address instead",
            )
        return named
    user, _, rest = value.rpartition("@")
    address, port = rest, None
    if rest.count(":") == 1:
        address, _, port_text = rest.partition(":")
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise HostError(f"jump {value!r} of host {target.name!r}: {port_text!r} is not a TCP port",
                            'write jump = "user@bastion:22" or the name of a [hosts.NAME] table')
        port = int(port_text)
    if not address:
        raise HostError(f"jump {value!r} of host {target.name!r} has no host name",
                        'write jump = "user@bastion:22" or the name of a [hosts.NAME] table')
    return replace(target, name=f"{target.name} (jump {value})", address=address, port=port, user=user or target.user,
                   jump=None)
