"""The command line loads only what it needs: starting `specdec-tui` (and --help) must not pay for the UI
toolkit, the HTTP clients or SSH before the panel's first frame (issue 8: cold start ≤ 1 s)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("textual", "httpx", "aiohttp", "asyncssh")


def loaded_after(code: str) -> set[str]:
    """Top-level packages among HEAVY in sys.modules after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


def test_importing_the_cli_loads_no_ui_http_or_ssh_package() -> None:
    assert loaded_after("import specdec_tui.cli.main") == set()


def test_building_the_full_parser_with_every_command_loads_none_either() -> None:
    assert loaded_after("from specdec_tui.cli.main import build_parser\nbuild_parser()") == set()


def test_the_health_module_loads_httpx_only_when_it_probes() -> None:
    assert loaded_after("import specdec_tui.loop.health") == set()
    assert loaded_after("import specdec_tui.loop.health_probe as h\nh.new_probe_client(None)") == {"httpx"}


def test_a_panel_start_is_parsed_without_loading_command_modules() -> None:
    code = ("from specdec_tui.cli.main import panel_args\nimport sys\n"
            "a = panel_args(['--demo', '--session', 'unit'])\n"
            "assert a.demo and a.session == 'unit' and a.command is None, a\n"
            "assert panel_args(['unit', 'show']) is None and panel_args(['--help']) is None\n"
            "assert not [m for m in sys.modules if m.endswith('_cmd')], 'a command module was loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
