"""The panel's first frame imports only what that frame draws (issue 16: cold start ≤ 1.3× a minimal Textual app).

Every import made before the first frame delays it; the charts (plotext), TOML writing (tomlkit), the HTTP and
SSH clients, the sweep/replay/fleet machinery and the screens only a key opens are imported where they are
used. Each case imports, in a fresh interpreter, the modules a start loads before its first frame
(`specdec-tui --session FILE` and `--demo`) and names any heavy module that came with them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_tui.core.session import Session, Trial, save_session

from .ui_helpers import OFFLINE_UNIT

# Not needed for the Config tab on the first frame; each was on the start path before issue 16.
HEAVY = (
    "plotext",
    "textual_plotext",
    "tomlkit",
    "tomli_w",  # writing a session: the first save comes after the first frame
    "httpx",
    "aiohttp",
    "asyncssh",
    "specdec_tui.loop.sweep",
    "specdec_tui.loop.sweep_plan",
    "specdec_tui.loop.replay",
    "specdec_tui.loop.fleet",
    "specdec_tui.loop.rollback_preview",
    "specdec_tui.ui.screens.sweep_screen",
    "specdec_tui.ui.screens.compare_screen",
    "specdec_tui.ui.screens.sessions_screen",
    "specdec_tui.ui.screens.help_screen",
    "specdec_tui.ui.widgets.tok_chart",
    "specdec_tui.ui.widgets.trade_off_chart",
    "specdec_tui.ui.widgets.journal_pane",
    "specdec_tui.ui.widgets.health_pane",
    "specdec_tui.ui.widgets.fleet_table",
    # the Config tab's form, editor and diff: the first frame shows the unit as text (UnitPreview), the form
    # is mounted after it (MainScreen.mount_form)
    "specdec_tui.ui.widgets.config_pane",
    "specdec_tui.ui.widgets.flag_form",
    "specdec_tui.ui.widgets.flag_input",
    "specdec_tui.ui.widgets.unit_editor",
    "specdec_tui.ui.widgets.diff_view",
    "specdec_tui.core.unit_diff",
    "specdec_tui.core.trade_off",
    "textual.widgets._text_area",
    "textual.document._document",
    # the unit parser and flag tables (~15 ms on 2 cores): the first frame shows the unit as text; the form, a push
    # and a trial's start parse it, after the first frame
    "specdec_tui.core.unit",
    "specdec_tui.core.flags",
    "specdec_tui.core.flag_table",
    # SGLang's log parser: the journal feed and a start failure's cause need it, after the first frame
    "specdec_tui.core.sglang.parse",
    "specdec_tui.loop.journal_feed",
    "specdec_tui.loop.start_failure",
    # the palette's provider (Textual imports it through SpecdecApp.COMMANDS when the palette opens) and the dialogs
    "specdec_tui.ui.commands",
    "specdec_tui.ui.screens.confirm_screen",
    "specdec_tui.ui.screens.error_screen",
    # the demo's journal store and state file (orjson brings json), its supervisor's prctl (ctypes): read or written
    # once the host connects, after the first frame
    "specdec_tui.hosts.local.journal",
    "specdec_tui.hosts.local.prctl",
    "orjson",
    "ctypes",
)

# An offline start has no trial loop and no host: their records (dataclasses, ~1.5 ms each to build on 2 cores;
# these three modules held 23 of them, ~30 ms) come with a host, not with a session file opened for reading.
OFFLINE_HEAVY = (
    "specdec_tui.loop.events",
    "specdec_tui.bench.events",
    "specdec_tui.hosts.base",
)

# What `specdec-tui --session FILE` imports before the app runs: the CLI, the start command, the panel.
OFFLINE_START = "import specdec_tui.cli.main, specdec_tui.cli.tui_cmd, specdec_tui.cli.session_arg, specdec_tui.ui.app"
# `--demo` adds the demo's workspace and the host's current session; the host itself, the trial loop and the host
# link are opened and built after the first frame (SpecdecApp.host, SpecdecApp.trial_loop).
DEMO_START = OFFLINE_START + ", specdec_tui.hosts.local.workspace, specdec_tui.loop.current_session"
# ... so the demo's first frame does not build the host's records either: seven frozen dataclasses in hosts.base
# and the state file's record, ~45 M instructions (bench/start_instructions.py)
HOST_HEAVY = ("specdec_tui.hosts.base", "specdec_tui.hosts.local.host", "specdec_tui.hosts.local.state")
# ... so a start on a host does not build the loop's records before its first frame either (~50 ms on 2 cores).
LOOP_HEAVY = (
    "specdec_tui.loop.trial",
    "specdec_tui.loop.trial_host_steps",
    "specdec_tui.ui.host_link",
    "specdec_tui.loop.events",
    "specdec_tui.bench.events",
    "specdec_tui.loop.health",
    "specdec_tui.loop.health_probe",
    "specdec_tui.core.compare",
)


def heavy_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The `heavy` modules in sys.modules after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("start", [OFFLINE_START, DEMO_START], ids=["session-file", "demo"])
def test_the_modules_a_start_imports_before_its_first_frame_bring_nothing_heavy(start: str) -> None:
    assert heavy_after(start) == []


def test_an_offline_start_builds_no_loop_or_host_records_before_its_first_frame() -> None:
    assert heavy_after(OFFLINE_START, OFFLINE_HEAVY) == []


def test_the_demos_start_imports_no_host_records_before_its_first_frame() -> None:
    assert heavy_after(DEMO_START, HOST_HEAVY) == []


def test_a_start_on_a_host_builds_no_loop_records_before_its_first_frame() -> None:
    assert heavy_after(DEMO_START, LOOP_HEAVY) == []


def test_the_later_tabs_and_keys_still_bring_their_modules_when_used() -> None:
    """The other side of the cut: what moved off the start path still loads where it is needed."""
    code = (OFFLINE_START + "\nfrom specdec_tui.ui.session_side import session_scopes\nsession_scopes()\n"
            "import specdec_tui.ui.widgets.tok_chart, specdec_tui.ui.widgets.config_pane")
    assert {"plotext", "specdec_tui.ui.screens.sweep_screen", "specdec_tui.ui.widgets.tok_chart",
            "specdec_tui.ui.widgets.flag_form", "textual.widgets._text_area"} <= set(heavy_after(code))


# The panel itself, not only its imports: the modules loaded when the demo's first frame is written (a fresh
# interpreter, the CLI's own `demo_app`, headless). What the first frame's widgets and footer ask for (a key's
# check_action, a binding's screen) counts too.
# The end every frame probe shares: the app run until `watched` has seen its frame (`seen`), then the demo's host
# closed. A probe defines `app`, `seen` and `watched(screen, dropped)`, then prints what it found.
UNTIL_SEEN = """
watch_frames(app, watched)

async def main():
    async with app.run_test(size=(120, 40)) as pilot:
        while not seen:
            await pilot.pause()
    if app.has_host:
        await app.host.close()

asyncio.run(main())
"""


def run_probe(script: str, tmp_path: Path) -> str:
    """What a frame probe printed, run in a fresh interpreter whose home and XDG folders are under `tmp_path`."""
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True,
                          env=env).stdout


FIRST_FRAME_PROBE = """
import argparse, asyncio, sys
from specdec_tui.cli.tui_cmd import demo_app

heavy = {heavy!r}
app = demo_app(argparse.Namespace(config=None, session=None, new_session=False))
seen = []
keys = []
from specdec_tui.ui.textual_compat import watch_frames

def watched(screen, dropped):
    # a frame written to the terminal: not one drawn inside the start-up batch, which Textual drops
    if not seen and not dropped and type(screen).__name__ == "MainScreen":
        seen.append(' '.join(m for m in heavy if m in sys.modules) or '-')
        keys.extend(str(key.description) for key in screen.query("FooterKey"))
""" + UNTIL_SEEN + """
print(','.join(keys))
print(seen[0])
"""


def test_the_demos_first_frame_is_drawn_before_the_loop_and_the_host_are_imported_and_offers_the_host_keys(
        tmp_path: Path) -> None:
    """The host is opened after the first frame, yet that frame's footer already offers what acts on it."""
    heavy = (*LOOP_HEAVY, *HOST_HEAVY, "specdec_tui.ui.screens.compare_screen", "specdec_tui.ui.commands",
             "specdec_tui.ui.screens.confirm_screen", "specdec_tui.hosts.local.journal", "orjson")
    out = run_probe(FIRST_FRAME_PROBE.format(heavy=heavy), tmp_path)
    assert out.split()[-1:] == ["-"], out
    assert {"Push", "Restart", "Rollback", "Bench"} <= set(out.split()[-2].split(",")), out


# The form-ready frame (issue 34 point 5: ≤ 1.5× the minimal app's first frame): the Config pane's modules come
# with it, but not what only a push or the first edit needs. Each was on that path before.
FORM_FRAME_LATER = (
    "specdec_tui.hosts.base",  # loop.unit_push's types (a push comes with a host); with_secrets needs none of it
    "specdec_tui.core.unit_diff",  # the diff of an edit: the form's first frame shows the unit unedited
    # judging the unit (the release's parser rebuilt, its start-up rules): the findings come a frame after the form
    "specdec_tui.core.flags",
    "specdec_tui.core.sglang_schema.argv_parser",
    "specdec_tui.core.flag_rules",
)

FORM_FRAME_PROBE = """
import argparse, asyncio, sys
from specdec_tui.cli import tui_cmd
from specdec_tui.ui.textual_compat import watch_frames

later = {later!r}
session = {session!r}
if session:
    from specdec_tui.core.config import Config
    app = tui_cmd.offline_app(argparse.Namespace(session=session, host=None, sessions=False), Config())
else:
    app = tui_cmd.demo_app(argparse.Namespace(config=None, session=None, new_session=False))
seen = []

def watched(screen, dropped):
    # the first frame written with the Config pane shown: what the operator waits for before editing
    if not seen and not dropped and type(screen).__name__ == "MainScreen" and screen.form_mounted:
        seen.append(' '.join(m for m in later if m in sys.modules) or '-')
""" + UNTIL_SEEN + """
print(seen[0])
"""


@pytest.mark.parametrize("module", FORM_FRAME_LATER)
@pytest.mark.parametrize("start", ["session-file", "demo"])
def test_the_form_ready_frame_is_drawn_before_what_only_a_push_or_an_edit_needs_is_imported(
        module: str, start: str, tmp_path: Path) -> None:
    session = ""
    if start == "session-file":
        path = tmp_path / "session.toml"
        save_session(Session(host="demo", unit="sglang-demo.service", trials=[Trial(id=1, unit_text=OFFLINE_UNIT)]),
                     path)
        session = str(path)
    out = run_probe(FORM_FRAME_PROBE.format(later=(module,), session=session), tmp_path)
    assert out.split()[-1:] == ["-"], f"{module} imported by the form-ready frame: {out}"


OPTIONS_PROBE = """
import argparse, asyncio
from specdec_tui.cli import tui_cmd
from specdec_tui.core.sglang_schema import schema
from specdec_tui.ui.textual_compat import watch_frames

built = []
make = schema._option
schema._option = lambda raw: built.append(raw["option_strings"][0]) or make(raw)
app = tui_cmd.demo_app(argparse.Namespace(config=None, session=None, new_session=False))
seen = []

def watched(screen, dropped):
    if not seen and not dropped and type(screen).__name__ == "MainScreen" and screen.form_mounted:
        seen.append(len(built))
""" + UNTIL_SEEN + """
print(seen[0], len(schema.default_schema().options), len(built))
"""


def test_the_form_ready_frame_builds_only_the_release_options_it_looks_up_not_the_whole_table(tmp_path: Path) -> None:
    """SGLang 0.5.23 declares 531 options; the demo's unit and the form's rows name ~15 (issue 34: building them all
    was ~8 ms of the start). The rest are built when something reads the whole table (validation, `unit show`).
    The form's first frame draws stand-ins for its fields, which look none up (the real fields' choices and help
    come after it): none may be built then; the count is seen to work by the time the panel quits (the real fields
    have looked theirs up)."""
    out = run_probe(OPTIONS_PROBE, tmp_path)
    built, declared, by_the_end = map(int, out.split()[-3:])
    assert declared > 500 and by_the_end > 0, out
    assert built < 40, f"{built} of {declared} options built by the form-ready frame"
