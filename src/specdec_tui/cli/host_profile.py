"""The benchmark profile a headless verb on a host starts from: the one the panel's `b` runs there.

One rule for `bench --host`, `sweep` and `tune`: `--profile NAME` (the demo's own profiles by name too), else the
demo's profile on the demo host, else the config's `default_profile`. `bench --host` once started from the
built-in defaults instead, so a recorded run sat in the panel's session measured another way (newcomer44).
"""

from __future__ import annotations

import argparse
import dataclasses

from specdec_tui.cli.errors import CliError
from specdec_tui.core.config import BenchProfile, Config

__all__ = ["host_base_profile"]


def host_base_profile(args: argparse.Namespace, config: Config, host_name: str) -> BenchProfile:
    """The profile before the command line's overrides (`bench_cmd.apply_overrides`)."""
    from specdec_tui.hosts.local.workspace import DEMO_PROFILE, DEMO_PROFILES

    name = getattr(args, "profile", None)
    if host_name == "demo":  # the demo's profiles by name, beside the config's
        config = dataclasses.replace(config, profiles={**DEMO_PROFILES, **config.profiles})
    if name:
        if name not in config.profiles:
            raise CliError(f"no benchmark profile {name!r} in the config (profiles: {', '.join(sorted(config.profiles))})")
        return config.profiles[name]
    return DEMO_PROFILE if host_name == "demo" else config.profile()
