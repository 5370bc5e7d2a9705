"""The connections of a sweep's or a tune's hosts, one owner: `HostGroup` connects them in turn, names the host
whose connect failed (`ConnectFailed`), closes those it opened when one fails or is cancelled (a Ctrl-C mid-connect)
and all of them at the end, never raising from a close. `specdec-tui sweep` and `specdec-tui tune` use it for
every host they run on; the panel's sweep and tune screens through `OtherHosts`, for the hosts beyond its own
(whose connection the panel keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from specdec_tui.core.config import Config
from specdec_tui.hosts.errors import HostError
from specdec_tui.hosts.factory import open_host
from specdec_tui.loop.trial import TrialLoop

if TYPE_CHECKING:
    from specdec_tui.hosts.base import Host


class ConnectFailed(HostError):
    """The host `host` of a group could not be connected. Its message and hint are the host's own (the panel
    shows them as they were); `host` is for whoever says which host ("HOST: what failed")."""

    def __init__(self, host: str, error: HostError) -> None:
        super().__init__(error.message, error.hint)
        self.host = host
        self.error = error


def with_host(err: BaseException, words: str) -> str:
    """`words` about `err`, led by the host's name when a group's connect failed there ("b: cannot reach ..."):
    the one wording of the CLI's sweep and tune and the panel's sweep and tune screens."""
    return f"{err.host}: {words}" if isinstance(err, ConnectFailed) else words


class HostGroup:
    """Named hosts connected in turn and closed together; usable as `async with`.

    A host counts as opened from the moment its connect begins: a connect that fails or is cancelled half-way
    may hold part of a connection, and closing a host that holds none does nothing."""

    def __init__(self, hosts: Sequence[tuple[str, Host]]) -> None:
        self.hosts = list(hosts)
        self._opened: list[Host] = []

    async def connect(self) -> None:
        """Connect every host in order. A HostError becomes ConnectFailed naming that host; on it, or on any
        other exit (CancelledError at a Ctrl-C), the hosts opened so far are closed before it propagates."""
        try:
            for name, host in self.hosts:
                self._opened.append(host)
                try:
                    await host.connect()
                except HostError as err:
                    raise ConnectFailed(name, err) from err
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Close every host opened, each once; a close that fails is let go (the run is over either way, and
        nothing the user can do about it), so it never hides what ended the run."""
        opened, self._opened = self._opened, []
        for host in opened:
            try:
                await host.close()
            except HostError:
                pass

    async def __aenter__(self) -> HostGroup:
        await self.connect()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()


def loops_like(config: Config, names: Sequence[str], like: TrialLoop) -> list[TrialLoop]:
    """Trial loops on the config's hosts `names` that add their trials to `like`'s session (and its file), with
    its benchmark profile: the other hosts of a sweep started from one host (the panel's). A host whose service
    the sweep starts keeps it running when closed, as on a real host (the sweep restores what ran before).
    Raises HostError naming a host the config does not know."""
    loops = []
    for name in names:
        host = open_host(config, name, keep_running=True)
        loop = TrialLoop.for_host(host, config, like.session, host_name=name, session_path=like.session_path,
                                  profile=like.profile)
        loop.save_in_background = like.save_in_background  # one session, one writer (loop.session_saver)
        loops.append(loop)
    return loops


class OtherHosts:
    """The hosts a sweep or tune on several hosts opens beside the panel's own: their loops (`loops_like`),
    connected by one `HostGroup`, kept for "apply the winner?" / `a`, closed once the screen is done with them
    (the panel's own host stays open)."""

    def __init__(self) -> None:
        self.loops: list[TrialLoop] = []
        self._group = HostGroup([])

    async def open(self, config: Config, names: Sequence[str], like: TrialLoop) -> list[TrialLoop]:
        """Loops on `names` like `like`, connected; a failed connect (ConnectFailed) closes those opened."""
        await self.close()
        loops = loops_like(config, names, like)
        self._group = HostGroup([(name, loop.host) for name, loop in zip(names, loops, strict=True)])
        await self._group.connect()
        self.loops = loops
        return loops

    async def close(self) -> None:
        self.loops = []
        await self._group.close()
