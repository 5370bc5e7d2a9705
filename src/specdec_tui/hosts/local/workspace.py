"""The demo workspace: a unit file that runs the simulated SGLang server, and a config pointing at it.

Why a workspace on disk: the demo must behave like a real host (edits persist, pushes keep a history,
the journal survives a panel restart), so `LocalHost` gets a directory of its own. The unit mirrors the
seed's `sglang-qwen.service` (Qwen3.5-122B-A10B on 4 GPUs, NEXTN with one step) with the real SGLang
flags; only the program differs: `python -m specdec_tui.sim`.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from specdec_tui.core import paths
from specdec_tui.core.atomic_file import write_atomic
from specdec_tui.core.config import BenchProfile, Config, HostConfig

DEMO_HOST = "demo"
DEMO_UNIT = "sglang-demo.service"
_PORT_ARG = re.compile(r"(--port[ \t=]+)(\d+)")
_TIME_SCALE_ARG = re.compile(r"--time-scale[ \t=]+([0-9.eE+-]+)")


@dataclass(frozen=True, slots=True)
class DemoWorkspace:
    """Where the demo lives and how to reach its (simulated) server."""

    root: Path
    unit_name: str
    port: int

    @property
    def unit_path(self) -> Path:
        return self.root / "units" / self.unit_name

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def time_scale(self) -> float:
        """How many times faster than the GPU it models the unit's simulator runs (its --time-scale, else 1):
        a workspace keeps the scale of the command that created it, whichever command runs it later."""
        try:
            found = _TIME_SCALE_ARG.search(self.unit_path.read_text(encoding="utf-8"))
            return float(found.group(1)) if found else 1.0
        except (OSError, ValueError):
            return 1.0


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def demo_unit_text(port: int, *, time_scale: float = 1.0, workdir: Path | None = None) -> str:
    """The demo unit: the seed's service with the sim as its program, one flag per line."""
    flags = [
        "--model-path Qwen/Qwen3.5-122B-A10B",
        "--served-model-name qwen",
        "--tp 4",
        "--speculative-algorithm NEXTN",
        "--speculative-num-steps 1",
        "--speculative-eagle-topk 1",
        "--speculative-num-draft-tokens 2",
        "--mem-fraction-static 0.85",
        "--host 127.0.0.1",
        f"--port {port}",
        "--enable-metrics",
    ]
    if time_scale != 1.0:  # a simulator-only flag: leave it out of the realistic default unit
        flags.append(f"--time-scale {time_scale:g}")
    from specdec_tui.core.systemd_quote import quote_arg  # written once, when the workspace is made

    exec_start = f"ExecStart={quote_arg(sys.executable)} -m specdec_tui.sim \\\n    " + " \\\n    ".join(flags)
    # systemd takes WorkingDirectory= literally, spaces included: no quotes (quoted, a path with a space — macOS's
    # "Application Support" — was a directory named with its quotes: the service failed with 200/CHDIR)
    if workdir is not None and any(ch in str(workdir) for ch in "\n\r\0"):
        raise ValueError(f"the demo workspace's path cannot hold a line break: {str(workdir)!r}")
    workdir_line = f"WorkingDirectory={workdir}\n" if workdir else ""
    return (
        "[Unit]\n"
        "Description=SGLang Qwen3.5-122B-A10B (specdec-tui demo, simulated)\n"
        "After=network-online.target\n"
        "Wants=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        "Environment=CUDA_VISIBLE_DEVICES=0,1,2,3\n"
        "Environment=SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n"
        "Environment=PYTHONUNBUFFERED=1\n"
        f"{workdir_line}"
        f"{exec_start}\n"
        "Restart=no\n"
        "TimeoutStopSec=10\n"
        "\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def unit_port(text: str) -> int | None:
    """The --port the unit's server listens on (None when the unit does not say)."""
    found = _PORT_ARG.search(text)
    return int(found.group(2)) if found else None


def with_port(text: str, port: int) -> str:
    """The unit with its first --port set to `port` (the demo's own rewrite of a taken port), every other byte kept."""
    return _PORT_ARG.sub(lambda m: f"{m.group(1)}{port}", text, count=1)


def ensure_demo_workspace(root: Path | None = None, *, time_scale: float = 1.0,
                          unit: str = DEMO_UNIT) -> DemoWorkspace:
    """Create the demo workspace, or keep an existing one (with its unit edits and history).

    An existing unit is only touched when its --port is taken by something else (a free port is written in
    place of the old one), or when its simulator runs on another Python than this one (a deleted venv, or another
    install of the tool: the current interpreter is written in its place, every flag kept — the demo runs this
    install's simulator, not an older copy's); both atomically, not as a history entry, since neither is a user's
    edit. `time_scale` applies to a new workspace only. `unit` is the unit's name (a rehearsal host's configured
    `unit`): one workspace can hold several units, each its own server.
    """
    root = Path(root) if root is not None else paths.demo_dir()
    (root / "units").mkdir(parents=True, exist_ok=True)
    ws_unit = root / "units" / unit
    if not ws_unit.exists():
        port = free_port()
        write_atomic(ws_unit, demo_unit_text(port, time_scale=time_scale, workdir=root))
        return DemoWorkspace(root, unit, port)
    text = ws_unit.read_text(encoding="utf-8")
    repaired = with_current_python(text)
    if repaired != text:
        write_atomic(ws_unit, repaired)
        text = repaired
    written_port = unit_port(text)
    if written_port is None:
        return DemoWorkspace(root, unit, 30000)
    port = written_port
    if not port_is_free(port) and not _demo_server_runs(root, unit):
        port = free_port()
        write_atomic(ws_unit, with_port(text, port))
    return DemoWorkspace(root, unit, port)


def _demo_server_runs(root: Path, unit: str) -> bool:
    """The demo's own server holds its port (its state file says so); asked only when the port is taken."""
    from specdec_tui.hosts.local.state import service_running  # its records are not needed on a usual start

    return service_running(root, unit)


def with_current_python(text: str) -> str:
    """The demo unit with its ExecStart program replaced by this Python when the simulator is written to run on
    another one: a venv since deleted (systemd would fail with 203/EXEC), or another install of the tool, whose
    simulator (its physics, its SGLang release) is not this one's — a demo started from a fresh clone ran the
    previous clone's; else `text`."""
    if _runs_this_python(text):
        return text  # the common case, told without the unit parser (~15 ms to import, before the first frame)
    from specdec_tui.core.systemd_quote import quote_arg
    from specdec_tui.core.unit import UnitFile

    try:
        command = UnitFile.parse(text).exec_start
    except ValueError:  # a unit the user broke by hand: left for the panel to show
        return text
    program = command.program
    if not os.path.isabs(program) or program == sys.executable or command.python_module != "specdec_tui.sim":
        return text
    start = text.find("ExecStart=")
    for written in (quote_arg(program), program):
        at = text.find(written, start)
        if start >= 0 and at >= 0:
            return text[:at] + quote_arg(sys.executable) + text[at + len(written):]
    return text


def _runs_this_python(text: str) -> bool:
    """The unit's ExecStart= names this Python as its program (as the demo writes it): nothing to repair."""
    start = text.find("ExecStart=")
    if start < 0:
        return False
    command = text[start + len("ExecStart="):].lstrip("-@+!:")
    if command.startswith(sys.executable + " "):
        return True  # told without the quoting rules: a path with no space or quote is written as it is
    from specdec_tui.core.systemd_quote import quote_arg

    return command.startswith(quote_arg(sys.executable) + " ")


def demo_host_config(ws: DemoWorkspace) -> HostConfig:
    return HostConfig(
        name=DEMO_HOST,
        address="",
        unit=ws.unit_name,
        unit_path=str(ws.unit_path),
        base_url=ws.base_url,
        healthy_timeout_s=120.0,
    )


# The demo's default benchmark: the seed's concurrency levels, few and short requests so a trial on the
# real-time simulator takes about a minute rather than ten; a workload to tune for (sampled at temperature 0.7,
# the realistic prompts), so the tool's own checks have nothing to warn about on every demo run.
DEMO_PROFILE = BenchProfile(name="demo", concurrency=(1, 4, 16, 32, 64), requests=8, max_tokens=128,
                            temperature=0.7, ignore_eos=True, prompts="realistic")
# The seed's trap, by name beside it (`--profile seed-trap`): greedy decoding run past the natural end on
# repetitive prompts, which inflates acceptance and tok/s. It shows what the warnings are about; not a target.
SEED_TRAP_PROFILE = BenchProfile(name="seed-trap", concurrency=(1, 4, 16, 32, 64), requests=8, max_tokens=128,
                                 temperature=0.0, ignore_eos=True, prompts="repetitive")
DEMO_PROFILES = {p.name: p for p in (DEMO_PROFILE, SEED_TRAP_PROFILE)}


def demo_config(ws: DemoWorkspace) -> Config:
    """A config with only the demo host (the default) and the default profiles plus the demo's two profiles."""
    defaults = Config()
    return Config(hosts={DEMO_HOST: demo_host_config(ws)}, profiles={**defaults.profiles, **DEMO_PROFILES},
                  default_host=DEMO_HOST, default_profile="demo")
