"""[clusters.*] in the config file, and the per-node units derived from the one unit the operator edits."""

from __future__ import annotations

import pytest

from specdec_tui.core.cluster_units import dist_init_addr, node_units
from specdec_tui.core.config import ClusterConfig, HostConfig
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.unit import UnitFile

HOSTS = """
[hosts.h0]
address = "gpu-0.lan"
[hosts.h1]
address = "gpu-1.lan"
[hosts.h2]
address = "gpu-2.lan"
"""


def test_a_cluster_lists_hosts_node_0_first() -> None:
    config = parse_config(HOSTS + '\n[clusters.big]\nnodes = ["h1", "h0", "h2"]\n', "c.toml")
    assert config.clusters["big"] == ClusterConfig(name="big", nodes=("h1", "h0", "h2"))


def test_a_clusters_settings_are_node_0s() -> None:
    config = parse_config(HOSTS.replace('address = "gpu-1.lan"', 'address = "gpu-1.lan"\nhealthy_timeout_s = 60.0')
                          + '\n[clusters.big]\nnodes = ["h1", "h0"]\n', "c.toml")
    settings = config.host_settings("big")
    assert settings is not None and (settings.name, settings.healthy_timeout_s) == ("h1", 60.0)
    assert config.host_settings("h0") == config.hosts["h0"]
    assert config.host_settings("nowhere") is None


def test_default_host_may_name_a_cluster() -> None:
    config = parse_config('default_host = "big"\n' + HOSTS + '\n[clusters.big]\nnodes = ["h0", "h1"]\n', "c.toml")
    assert config.default_host == "big"


@pytest.mark.parametrize("table, line, key, words", [
    ('[clusters.big]\nnodes = ["h0", "h9"]\n', 10, "clusters.big.nodes", 'names no host "h9"; defined: "h0", "h1", "h2"'),
    ('[clusters.big]\nnodes = ["h0", "h1", "h0"]\n', 10, "clusters.big.nodes", 'lists the host "h0" twice'),
    ('[clusters.big]\nnodes = ["h0"]\n', 10, "clusters.big.nodes", "a cluster needs at least 2 nodes, got 1"),
    ('[clusters.big]\nnodes = "h0"\n', 10, "clusters.big.nodes", 'expected a list of quoted strings, got "h0"'),
    ('[clusters.big]\n', 9, "clusters.big", "needs its nodes"),
    ('[clusters.h0]\nnodes = ["h1", "h2"]\n', 9, "clusters.h0", 'a host is already named "h0"'),
    ('[clusters.big]\nnodes = ["h0", "h1"]\nnode = 1\n', 11, "clusters.big.node", "unknown setting"),
    ('[clusters.big]\nnodes = ["h0", "h1"]\ndist_init_addr = "h0"\n', 11, "clusters.big.dist_init_addr",
     "must be HOST:PORT"),
])
def test_cluster_mistakes_name_file_line_and_key(table: str, line: int, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(HOSTS + "\n" + table, "c.toml")
    err = caught.value
    assert (err.source, err.line, err.key) == ("c.toml", line, key)
    assert words in err.what
    assert str(err).startswith(f"c.toml:{line}: {key}: ")


UNIT = """[Unit]
Description=SGLang
# tuned by hand
[Service]
ExecStart=/usr/bin/python3 -m sglang.launch_server \\
    --model-path Qwen/Qwen3-8B \\
    --tp-size 8
Restart=no
"""


def test_every_node_gets_its_rank_the_node_count_and_node_0s_address() -> None:
    cluster = ClusterConfig(name="big", nodes=("h0", "h1", "h2"))
    hosts = {n: HostConfig(name=n, address=f"gpu-{n[1]}.lan") for n in ("h0", "h1", "h2")}
    units = node_units(UNIT, cluster, hosts)
    assert [(u.node, u.rank) for u in units] == [("h0", 0), ("h1", 1), ("h2", 2)]
    for u in units:
        flags = UnitFile.parse(u.text).flags()
        assert (flags["node-rank"], flags["nnodes"], flags["dist-init-addr"]) == (str(u.rank), "3", "gpu-0.lan:50000")
        assert u.text.startswith("[Unit]\nDescription=SGLang\n# tuned by hand\n")  # the rest of the text untouched
    assert "    --node-rank 1" in units[1].text


def test_a_rank_already_in_the_text_is_replaced_not_doubled() -> None:
    cluster = ClusterConfig(name="big", nodes=("h0", "h1"))
    hosts = {n: HostConfig(name=n, address=n) for n in ("h0", "h1")}
    node0 = node_units(UNIT, cluster, hosts)[0].text
    again = node_units(node0, cluster, hosts)
    assert again[0].text == node0
    assert again[1].text.count("--node-rank") == 1 and UnitFile.parse(again[1].text).get_flag("node-rank") == "1"


def test_the_units_own_dist_init_addr_wins_then_the_clusters() -> None:
    hosts = {n: HostConfig(name=n, address=n) for n in ("h0", "h1")}
    own = UNIT.replace("--tp-size 8", "--tp-size 8 --dist-init-addr 10.9.9.9:7000")
    for u in node_units(own, ClusterConfig(name="c", nodes=("h0", "h1"), dist_init_addr="10.0.0.1:1"), hosts):
        assert UnitFile.parse(u.text).get_flag("dist-init-addr") == "10.9.9.9:7000"
    # upstream: python/sglang/srt/server_args.py (--nccl-init-addr is an alias of --dist-init-addr)
    aliased = UNIT.replace("--tp-size 8", "--tp-size 8 --nccl-init-addr 10.9.9.9:7000")
    for u in node_units(aliased, ClusterConfig(name="c", nodes=("h0", "h1")), hosts):
        assert "--dist-init-addr" not in u.text and "--nccl-init-addr 10.9.9.9:7000" in u.text
    set_in_config = ClusterConfig(name="c", nodes=("h0", "h1"), dist_init_addr="10.0.0.1:6000")
    assert dist_init_addr(set_in_config, hosts["h0"]) == "10.0.0.1:6000"
    assert dist_init_addr(ClusterConfig(name="c", nodes=("h0", "h1")), HostConfig(name="d", address="")) == "127.0.0.1:50000"
