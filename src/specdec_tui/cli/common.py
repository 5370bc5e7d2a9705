"""What the commands share: `--host`/`--config` parsing, loading the config and opening a host in words.

Imports none of the command modules (they import this), so the CLI has no import cycles. Heavy modules
(the config loader, the hosts) are imported when a command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from specdec_tui.cli.errors import CliError
from specdec_tui.core.terminal_codes import terminal_safe

if TYPE_CHECKING:
    from specdec_tui.core.config import Config, HostConfig
    from specdec_tui.hosts.base import Host


def add_target_options(parser: argparse.ArgumentParser, *, host_group: Any = None) -> None:
    """`--host NAME` and `--config FILE`, the same for every command that talks to a host.

    Both default to SUPPRESS so a value given before the command (`specdec-tui --host x bench`) is kept;
    after the command they work the same. `host_group` (a mutually exclusive group, e.g. with `--url`)
    receives `--host` instead of the parser."""
    (host_group or parser).add_argument("--host", default=argparse.SUPPRESS, metavar="NAME",
                                        help="host from the config, or demo (default: the config's default_host)")
    parser.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                        help="config file (default: $SPECDEC_TUI_CONFIG, then the user config dir)")


def add_time_scale_option(parser: argparse.ArgumentParser, default: float = 25.0) -> None:
    parser.add_argument("--time-scale", type=float, default=default, metavar="X",
                        help=f"with --host demo: a new demo workspace's simulated server runs X times faster "
                             f"(default {default:g}: a sweep or a replay runs many trials, so minutes, not an hour; "
                             "`demo` and the panel's demo default to real time, 1). An existing workspace keeps "
                             "the speed it was made with")


def load_cli_config(args: argparse.Namespace) -> tuple[Config, str]:
    """The config and the chosen host name; `demo` works without a config (its workspace is created).
    A bad config file is a CliError naming file, line, key and what to write."""
    import dataclasses

    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.config_file import find_config_path, load_config
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.hosts.factory import pick_host_name

    try:
        config = load_config(find_config_path(getattr(args, "config", None)))
        name = pick_host_name(config, getattr(args, "host", None))
    except (ConfigError, HostError) as err:
        raise CliError(str(err)) from None
    if name == "demo" and "demo" not in config.hosts:
        from specdec_tui.hosts.local.workspace import demo_host_config, ensure_demo_workspace

        ws = ensure_demo_workspace(time_scale=getattr(args, "time_scale", 1.0))
        config = dataclasses.replace(config, hosts={**config.hosts, "demo": demo_host_config(ws)})
        warn_time_scale(ws.time_scale)
    return config, name


def time_scale_words(scale: float) -> str:
    """Why the demo's figures are not the modelled GPU's, when its simulator runs faster than real time."""
    return (f"the demo's simulated server runs {scale:g}× faster than the GPU it models (--time-scale {scale:g} in "
            f"its unit, kept from the command that created the workspace): its tok/s are {scale:g}× and its "
            f"latencies 1/{scale:g} of the modelled ones")


def warn_time_scale(scale: float) -> None:
    if scale != 1.0:
        import sys

        print(f"note: {time_scale_words(scale)}", file=sys.stderr)


def open_cli_host(config: Config, name: str, *, keep_running: bool = False) -> Host:
    """The host `name`; a HostError becomes a CliError (see `open_host` for `keep_running`)."""
    from specdec_tui.hosts.errors import HostError
    from specdec_tui.hosts.factory import open_host

    try:
        return open_host(config, name, keep_running=keep_running)
    except HostError as err:
        raise CliError(str(err)) from None


def healthy_timeout_of(host_config: HostConfig | None) -> float:
    return host_config.healthy_timeout_s if host_config else 900.0


def parse_concurrency(text: str) -> tuple[int, ...]:
    """`--concurrency 1,4,16` → (1, 4, 16); a CliError in words for anything else."""
    from specdec_tui.core.comma_list import EmptyTerm, comma_terms
    from specdec_tui.core.config import MAX_CONCURRENCY

    try:
        levels = tuple(int(x) for x in comma_terms(text))
    except EmptyTerm:
        raise CliError(f"--concurrency {text!r} has an empty level between commas: a level left out? (e.g. 1,4,16)") from None
    except ValueError:
        raise CliError(f"--concurrency takes whole numbers separated by commas (got {text!r})") from None
    if not levels or min(levels) < 1:
        raise CliError("--concurrency levels must be ≥ 1")
    twice = sorted({n for n in levels if levels.count(n) > 1})
    if twice:
        raise CliError(f"--concurrency {', '.join(map(str, twice))} is given twice: each level runs once "
                       "(give each level once, e.g. 1,4,16)")
    if max(levels) > MAX_CONCURRENCY:
        raise CliError(f"--concurrency {max(levels)} is more than the {MAX_CONCURRENCY} parallel requests a "
                       "benchmark opens (each is a connection of its own); give levels up to that")
    return levels


def progress(line: str) -> None:
    print(terminal_safe(line), file=sys.stderr, flush=True)


class StepClock:
    """"[3/6] steps=3 · about 2 min 10 s left" for a sweep's or replay's steps, at the pace of the steps done
    (the panel's task screens say the same: `core.progress`)."""

    def __init__(self) -> None:
        import time

        self._now = time.monotonic
        self.started = self._now()

    def line(self, index: int, total: int, what: str) -> str:
        from specdec_tui.core.progress import eta_words

        eta = eta_words(index, total, self._now() - self.started)
        return f"[{index + 1}/{total}] {what}" + (f" · {eta}" if eta else "")


def rounded(value: Any, digits: int = 3) -> Any:
    """`value` (JSON-shaped: dicts, lists, numbers, text) with every float rounded to `digits` decimals, for a
    --json line: a figure's last digits (233.84615384615384) are noise the measurement cannot vouch for."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value
