"""The panel's configuration: hosts, benchmark profiles and UI settings, as the typed view every other
module uses. The file format is read by `config_file` (load, parse, save) with `config_reader`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SCHEMA_VERSION = 1  # the config file's schema these dataclasses describe

Endpoint = Literal["completions", "chat"]
Arrivals = Literal["poisson", "constant"]


@dataclass(frozen=True, slots=True)
class HostConfig:
    """One host the panel can drive. `api_key_env` names an environment variable: keys are never stored."""

    name: str
    address: str = ""  # host name or ~/.ssh/config alias; "" for the local demo host
    port: int | None = None  # None: ~/.ssh/config or 22
    user: str | None = None
    identity_file: str | None = None
    sudo: bool = False
    unit: str = "sglang.service"
    unit_path: str | None = None  # default /etc/systemd/system/<unit>
    base_url: str = "http://127.0.0.1:30000"
    api_key_env: str | None = None
    accept_new_host_key: bool = False
    connect_timeout_s: float = 10.0
    jump: str | None = None  # ProxyJump: another [hosts.NAME], or [user@]host[:port]
    workspace: str | None = None  # local (simulated) hosts: their own demo workspace dir; None: the shared demo
    healthy_timeout_s: float = 900.0  # restart → healthy, else the trial fails (and may roll back)
    auto_recover: bool = False  # `doctor` recovers a failed start on upstream's OOM ladder without --recover

    @property
    def resolved_unit_path(self) -> str:
        return self.unit_path or f"/etc/systemd/system/{self.unit}"


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One SGLang server spread over several hosts: `nodes` names [hosts.*] tables, node 0 serves HTTP.
    Every node runs the same unit with its own --node-rank; --dist-init-addr is `dist_init_addr` when set,
    else node 0's address with `dist_init_port` (a unit that sets --dist-init-addr itself keeps it)."""

    name: str
    nodes: tuple[str, ...] = ()
    dist_init_addr: str | None = None  # HOST:PORT every node can reach node 0 on
    dist_init_port: int = 50000


# The most parallel requests one benchmark level opens: every one is a connection and a task of its own (the
# client needs a file descriptor each), and a server's --max-running-requests is rarely above a few thousand.
MAX_CONCURRENCY = 4096


@dataclass(frozen=True, slots=True)
class BenchProfile:
    """How one benchmark run is shaped. Either `requests` per level or `duration_s` per level."""

    name: str = "default"
    endpoint: Endpoint = "completions"
    concurrency: tuple[int, ...] = (1, 4, 16, 32, 64)
    requests: int | None = 32  # per level (measured requests, at least one per worker; warm-up comes on top)
    duration_s: float | None = None  # per level, instead of `requests`
    warmup: int = 1  # warm-up requests per worker... per level, excluded from results
    max_tokens: int = 256
    temperature: float = 0.0
    ignore_eos: bool = False
    prompts: str = "realistic"  # realistic | repetitive | path to a prompt file
    request_timeout_s: float = 120.0
    stall_timeout_s: float = 30.0  # no bytes for this long → the request counts as a stall error
    level_timeout_s: float = 900.0
    model: str | None = None  # None: first id of /v1/models
    ttft_limit_s: float = 2.0  # the summary's best level keeps TTFT p99 at or under this (peak tok/s may queue)
    # issue 33: what is sent (a workload replaces `prompts`), how it arrives, and what counts as good
    workload: str = ""  # "": the `prompts` set; chat | code | long-context | trap | path to a JSONL workload
    seed: int = 0  # lengths, order and arrival times are drawn from it: the same seed sends the same load
    input_len: str = ""  # "": the workload's text; fixed:N | uniform:A:B | lognormal:MEDIAN:SIGMA (tokens by the
    # server's /v1/tokenize count of the workload's words; words where it has none)
    output_len: str = ""  # "": the workload's output_len, else max_tokens; or a distribution as input_len
    top_p: float | None = None  # None: the workload's, else the server's default
    rate: float | None = None  # requests/s: open-loop arrivals instead of the closed loop at `concurrency`
    arrivals: Arrivals = "poisson"
    burst: float = 1.0  # open loop: requests arrive in bursts of this many (mean rate unchanged)
    cooldown: int = 0  # open loop: the last N arrivals are sent but not measured (warm-up: the first `warmup`)
    slo: tuple[str, ...] = ()  # e.g. ("ttft_p99=2s", "itl_p99=50ms"): goodput counts requests meeting them
    # a recorded trace is replayed whole unless `requests`/`duration_s` were given for it (--requests/--duration, or
    # the profile's own keys): then its first N requests, or its arrivals in the first S s (after --rate's scaling)
    cut_trace: bool = False


@dataclass(frozen=True, slots=True)
class UIConfig:
    theme: str = "specdec-dark"
    journal_lines: int = 5000
    auto_bench: bool = False  # start the benchmark when the server turns healthy after a push
    auto_rollback: bool = True  # roll back when a restart does not reach healthy in time
    keymap: dict[str, str] = field(default_factory=dict)  # binding id → keys, for App.set_keymap


@dataclass(frozen=True, slots=True)
class Config:
    hosts: dict[str, HostConfig] = field(default_factory=dict)
    clusters: dict[str, ClusterConfig] = field(default_factory=dict)
    profiles: dict[str, BenchProfile] = field(default_factory=lambda: {"default": BenchProfile()})
    ui: UIConfig = field(default_factory=UIConfig)
    default_host: str | None = None
    default_profile: str = "default"
    source: str | None = None  # the file it was loaded from

    def host_settings(self, name: str) -> HostConfig | None:
        """The [hosts.*] table of `name`; for a cluster, its node 0's (the node that serves HTTP)."""
        cluster = self.clusters.get(name)
        return self.hosts.get(cluster.nodes[0] if cluster and cluster.nodes else name)

    def profile(self, name: str | None = None) -> BenchProfile:
        return self.profiles.get(name or self.default_profile) or BenchProfile()
