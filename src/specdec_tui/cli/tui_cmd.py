"""Starting the panel (the default command): `specdec-tui [--config F] [--host NAME] [--session FILE]`.

A start on a host continues that host's current session (its newest session file in the data dir's
sessions/): its trials are listed and compare works at once; `--new-session` starts a fresh one.
`--session FILE` without `--host` opens an existing session offline (browse and compare trials); with
`--host NAME` the session is continued on that host. `--session DIR` (or `--sessions`, when the parser
offers it) opens the list of saved sessions in that folder (the data dir's sessions/), also offline.

`run_app` is the one entry the demo (`--demo`) and this command share: it takes what they resolved
and runs the Textual app until the user quits.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specdec_tui.cli.errors import CliError
from specdec_tui.cli.session_arg import resolve_panel_session, resolve_session
from specdec_tui.core.config import Config
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import find_config_path, load_config
from specdec_tui.core.paths import sessions_dir
from specdec_tui.core.session import Session
from specdec_tui.hosts.errors import HostError

if TYPE_CHECKING:  # the host records are built with a host, not for an offline start
    from collections.abc import Callable

    from specdec_tui.hosts.base import Host

MAX_DEMO_NODES = 16  # each node is a workspace and a simulated server on this machine


def resolve_config(arg: str | None) -> Config:
    """--config, else $SPECDEC_TUI_CONFIG, else the user config file when it exists, else defaults."""
    try:
        return load_config(find_config_path(arg))
    except ConfigError as err:
        raise CliError(str(err)) from None


def build_app(config: Config, host: Host | None, session: Session, session_path: Path | None, *,
              sessions_from: Path | None = None, host_name: str | None = None, unit_name: str | None = None,
              open_host: Callable[[], Host] | None = None) -> Any:
    """The panel, not yet running; `sessions_from` opens the saved-sessions list of that folder first;
    `open_host` opens the host named `host_name` (running `unit_name`) after the first frame (ui.app.make_app)."""
    from specdec_tui.ui.app import make_app

    app = make_app(config, host, session, session_path=session_path, host_name=host_name, unit_name=unit_name,
                   open_host=open_host)
    app.sessions.open_sessions_from = sessions_from
    return app


def run_app(config: Config, host: Host | None, session: Session, session_path: Path | None) -> int:
    """Run the panel on `host` (None: browse `session` offline) until the user quits."""
    return run_built(build_app(config, host, session, session_path))


def run_built(app: Any) -> int:
    app.settles_heap = True  # a long-lived panel: its start-up heap is frozen after the first frame (ui.gc_policy)
    app.signals_stop = True  # SIGTERM/SIGHUP: an interrupt, not a kill (ui.signal_exit)
    try:
        app.run()
    finally:
        from specdec_tui.ui.signal_exit import shutdown_finished

        shutdown_finished()
    return int(app.return_code or 0)


def offline_app(args: argparse.Namespace, config: Config) -> Any | None:
    """The panel without a host for `--sessions`, `--session DIR`, or an existing `--session FILE` without
    `--host`; None when the arguments ask for a host. Nothing is connected to."""
    if getattr(args, "sessions", False):
        return build_app(config, None, Session(host="offline"), None, sessions_from=sessions_dir())
    if not args.session or args.host:
        return None
    path = Path(args.session)
    if path.is_dir():
        return build_app(config, None, Session(host="offline"), None, sessions_from=path)
    if not path.exists():
        return None  # a new file: a session started on the default host
    # a saved session on its own is opened for reading: trials, compare; no host is touched
    session, session_path, to_load = resolve_panel_session(args.session, "offline", "")
    app = build_app(config, None, session, session_path)
    app.trials_to_load = to_load
    return app


def run(args: argparse.Namespace) -> int:
    if not args.demo:
        refuse_demo_only_options(args)
    if args.demo and args.headless:
        return run_demo(args)
    from specdec_tui.ui.gc_policy import hold_collections, resume_collections

    hold_collections()  # the panel: no collection while it starts (ui.gc_policy; main holds them from its first
    # import on); back on when it has settled
    try:
        return _run_panel(args)
    finally:
        resume_collections()  # also when it never started (a config error said in words, an in-process caller)


def refuse_demo_only_options(args: argparse.Namespace) -> None:
    """`--headless` and `--nodes` mean something only with `--demo`: without it they were dropped in silence and the
    panel opened (on a pipe, a screenful of escape codes) where the user asked for no UI or for a cluster."""
    if args.headless:
        raise CliError("--headless goes with --demo (`specdec-tui --demo --headless`, or `specdec-tui demo`); on a "
                       "host of the config, run a headless verb instead: bench, sweep, tune, doctor "
                       "(`specdec-tui --help` lists them)")
    if getattr(args, "nodes", 1) not in (None, 1):
        raise CliError("--nodes goes with --demo (`specdec-tui --demo --nodes N`); a real cluster is a "
                       "[clusters.NAME] table in the config, opened with --host NAME")


def _run_panel(args: argparse.Namespace) -> int:
    if args.demo:
        return run_demo(args)
    config = resolve_config(args.config)
    offline = offline_app(args, config)
    if offline is not None:
        return run_built(offline)
    from specdec_tui.hosts.factory import open_host, pick_host_name

    try:
        host_name = pick_host_name(config, args.host)
        host = open_host(config, host_name)
    except HostError as err:
        raise CliError(str(err)) from None
    session, session_path, to_load = resolve_panel_session(args.session, host_name, host.info.unit, new=_new(args))
    app = build_app(config, host, session, session_path)
    app.trials_to_load = to_load  # the rest of the session's trials: loaded after the first frame
    return run_built(app)


def _new(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "new_session", False))


def run_demo(args: argparse.Namespace) -> int:
    """`--demo`: the panel on the embedded demo host; with `--headless`, one trial printed instead;
    with `--nodes N` (N >= 2), on a demo cluster of N nodes."""
    nodes = getattr(args, "nodes", 1)
    if nodes is None:
        nodes = 1
    if not 1 <= nodes <= MAX_DEMO_NODES:  # 0 was taken as 1; 100,000 made a workspace and a server each
        raise CliError(f"--nodes must be 1 to {MAX_DEMO_NODES}, not {nodes} (each node is a simulated server "
                       "on this machine)")
    if nodes > 1:
        return run_demo_cluster(args, nodes)
    if args.headless:
        from specdec_tui.cli import demo_cmd

        defaults = argparse.Namespace(steps=None, time_scale=1.0, concurrency=None, requests=None,
                                      max_tokens=None, workspace=None, keep_running=False)
        return demo_cmd.run(argparse.Namespace(**{**vars(defaults), **vars(args)}))
    app = demo_app(args)
    try:
        return run_built(app)
    finally:
        import asyncio

        host = app.opened_host  # one the panel never opened started nothing
        if host is not None:
            asyncio.run(host.close())


def demo_app(args: argparse.Namespace) -> Any:
    """The panel on the demo host, not yet running, continuing the demo's current session (or --session,
    or a fresh one with --new-session)."""
    from specdec_tui.hosts.local.workspace import demo_config, ensure_demo_workspace

    user = resolve_config(args.config)
    ws = ensure_demo_workspace()
    demo = demo_config(ws)
    config = Config(hosts=demo.hosts, profiles={**user.profiles, **demo.profiles}, ui=user.ui,
                    default_host="demo", default_profile=demo.default_profile, source=theme_file(user))

    def open_demo_host() -> Host:
        """The demo host, opened by the panel after its first frame: the host's module and records are not
        needed to draw it (issue 16, cold start)."""
        from specdec_tui.hosts.local.host import LocalHost

        return LocalHost(ws.root, ws.unit_name, ws.base_url, name="demo")

    session, session_path = resolve_session(args.session, "demo", ws.unit_name, new=_new(args))
    app = build_app(config, None, session, session_path, host_name="demo", unit_name=ws.unit_name,
                    open_host=open_demo_host)
    scale = ws.time_scale  # kept from the command that created the workspace (`tune`, `sweep`: 25×)
    if scale != 1.0:
        app.sub_title += f" · simulated {scale:g}× fast: tok/s ×{scale:g}"
    return app


def theme_file(user: Config) -> str:
    """Where a demo panel saves a picked theme: the user's config file (created on the first save when there is
    none yet). Only `[ui] theme` is written there (save_ui_theme), never the demo's hosts."""
    from specdec_tui.core.paths import default_config_file

    return user.source or str(default_config_file())


def run_demo_cluster(args: argparse.Namespace, nodes: int) -> int:
    """`--demo --nodes N`: the panel on N local demo nodes forming one cluster (hosts.local.demo_cluster)."""
    if args.headless:
        raise CliError("--headless runs on the single demo host; leave out --nodes, or open the cluster's panel")
    import asyncio

    from specdec_tui.hosts.factory import open_host
    from specdec_tui.hosts.local.demo_cluster import DEMO_CLUSTER, ensure_demo_cluster

    user = resolve_config(args.config)
    demo = ensure_demo_cluster(nodes=nodes)
    config = Config(hosts=demo.hosts, clusters=demo.clusters, profiles={**user.profiles, **demo.profiles},
                    ui=user.ui, default_host=DEMO_CLUSTER, default_profile=demo.default_profile,
                    source=theme_file(user))
    host = open_host(config, DEMO_CLUSTER)
    session, session_path = resolve_session(args.session, DEMO_CLUSTER, host.info.unit, new=_new(args))
    try:
        return run_app(config, host, session, session_path)
    finally:
        asyncio.run(host.close())
