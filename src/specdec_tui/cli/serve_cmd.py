"""`specdec-tui serve [--demo | --host NAME] [--port P]`: the panel in a web browser, through textual-serve.

textual-serve starts one panel process per browser tab (the same `specdec-tui [--demo | --host NAME ...]` a
terminal would run, with this Python) and relays its screen and keys over a websocket. Whoever holds the URL
`serve` prints (it carries a token made at each start) drives the host (edit, push, restart); a page from another
origin never does, and at most --max-panels panels run at once (cli.serve_server). It listens on 127.0.0.1
unless `--bind` names another address *and* `--public` says that is meant, and then it prints a warning saying
who can reach it; --public changes where it listens, never the token, the Origin check or the bound.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import socket
import sys
from pathlib import Path

from specdec_tui.cli.errors import CliError
from specdec_tui.core.terminal_codes import terminal_safe

DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_PANELS = 4
MAX_PANELS_LIMIT = 64


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve", help="serve the panel to a web browser (textual-serve; 127.0.0.1 unless --public)",
        description="Serve the panel on http://127.0.0.1:PORT: every browser tab gets its own panel process "
                    "on the host. Open the URL it prints: it holds a token made at this start, and no panel opens without it "
                    "(nor for a page from another origin). Another address needs --bind ADDRESS --public.")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--demo", action="store_true", help="the embedded demo host (simulated SGLang, no GPU, no SSH)")
    target.add_argument("--host", metavar="NAME", help="host from the config (default: the config's default_host)")
    p.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                   help="config file (default: $SPECDEC_TUI_CONFIG, then the user config dir)")
    p.add_argument("--session", metavar="FILE", help="session file the panel opens or continues")
    p.add_argument("--profile", metavar="NAME", help="benchmark profile from the config")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="P", help=f"TCP port (default {DEFAULT_PORT})")
    p.add_argument("--bind", default=DEFAULT_BIND, metavar="ADDRESS",
                   help=f"address to listen on (default {DEFAULT_BIND}); anything but loopback needs --public")
    p.add_argument("--public", action="store_true",
                   help="allow a non-loopback --bind: whoever can reach the port and holds the printed URL drives the host")
    p.add_argument("--public-url", metavar="URL",
                   help="the URL browsers use to reach this server (default: http://ADDRESS:PORT, "
                        "this machine's name for a wildcard address)")
    p.add_argument("--max-panels", type=int, default=DEFAULT_MAX_PANELS, metavar="N",
                   help=f"most panels (browser tabs, one process each) open at once (default {DEFAULT_MAX_PANELS})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_bind(args.bind, args.public)
    if not 0 < args.port < 65536:
        raise CliError(f"--port {args.port}: not a TCP port (1-65535)")
    if not 1 <= args.max_panels <= MAX_PANELS_LIMIT:
        raise CliError(f"--max-panels {args.max_panels}: give 1 to {MAX_PANELS_LIMIT} (each panel is a process here)")
    if not args.demo:
        check_host(getattr(args, "config", None), args.host)
    command = panel_command(args)
    if not is_loopback(args.bind):
        print(public_warning(args.bind, args.port), file=sys.stderr, flush=True)
    from specdec_tui.cli.serve_server import PanelServer, allowed_origins, new_token  # aiohttp: only when serving

    url = checked_public_url(args.public_url) if args.public_url else public_url(args.bind, args.port)
    server = PanelServer(command, host=args.bind, port=args.port, title="specdec-tui", public_url=url.rstrip("/"),
                         token=new_token(), origins=allowed_origins(url, args.port, is_loopback(args.bind)),
                         max_panels=args.max_panels)
    try:
        server.serve()
    except OSError as err:  # the port is taken, or the address is not this machine's
        raise CliError(f"cannot listen on {args.bind}:{args.port}: {err.strerror or err}") from None
    return 0


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def check_bind(address: str, public: bool) -> None:
    """Loopback is always allowed; any other address only with --public (the panel has no login)."""
    if not is_loopback(address) and not public:
        raise CliError(f"--bind {address} would let anyone who can reach it drive the host (there is no login); "
                       f"pass --public as well to do that on purpose, or leave --bind at {DEFAULT_BIND}")


def public_warning(address: str, port: int) -> str:
    return (f"WARNING: serving the panel on {address}:{port} with no login: anyone who can reach this port can "
            "edit, push and restart the host's SGLang unit and run benchmarks on it. Put it behind a firewall, "
            "an SSH tunnel or an authenticating proxy.")


def checked_public_url(url: str) -> str:
    """--public-url is where browsers reach this server: http(s)://HOST[:PORT][/PATH]; anything else (a word, a
    javascript: URL) went into the page as its websocket's address and the page never drew."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise CliError(f"--public-url {terminal_safe(url)!r}: give the URL browsers use to reach this server, "
                       "http://HOST[:PORT] or https://HOST[:PORT] (a path may follow; no ?query or #fragment)")
    return url


def public_url(address: str, port: int) -> str:
    """What the page's websocket connects back to: the bound address, or this machine's name for a wildcard."""
    host = address
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        pass
    else:
        if ip.is_unspecified:
            host = socket.getfqdn()
        elif ip.version == 6:
            host = f"[{address}]"
    return f"http://{host}:{port}"


def check_host(config_arg: str | None, host_name: str | None) -> None:
    """Fail at start, not in every browser tab, when the config is broken or names no such host."""
    from specdec_tui.cli.tui_cmd import resolve_config
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.hosts.factory import open_host, pick_host_name

    config = resolve_config(config_arg)
    try:
        name = pick_host_name(config, host_name)
        if name not in config.hosts and name != "demo":
            open_host(config, name)  # an unknown name: the factory's own error, before it touches anything
    except HostError as err:
        raise CliError(str(err)) from None


def panel_argv(args: argparse.Namespace) -> list[str]:
    """The panel's own options, as `specdec-tui` takes them (paths made absolute: a session may start elsewhere)."""
    argv: list[str] = []
    if args.demo:
        argv.append("--demo")
    if args.host:
        argv += ["--host", args.host]
    config = getattr(args, "config", None)
    if config:
        argv += ["--config", str(Path(config).absolute())]
    if args.session:
        argv += ["--session", str(Path(args.session).absolute())]
    if args.profile:
        argv += ["--profile", args.profile]
    return argv


def panel_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs per browser tab: this Python, this package, every word quoted."""
    return shlex.join([sys.executable, "-m", "specdec_tui", *panel_argv(args)])
