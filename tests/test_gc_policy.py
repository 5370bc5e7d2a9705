"""The panel's collector policy (ui.gc_policy, issue 16): the real program freezes its start-up heap once the first
frame is drawn and collects old objects rarely; the test suite's own apps leave the collector alone.
Each check runs in a fresh interpreter: a frozen heap would outlive the test."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import asyncio, gc, json, sys
    from specdec_tui.core.config import Config
    from specdec_tui.core.session import Session
    from specdec_tui.ui.app import make_app
    from specdec_tui.ui import gc_policy

    async def main() -> None:
        if sys.argv[1] == "settle":
            gc_policy.hold_collections()  # as `cli.tui_cmd.run` does before it builds the panel
        held = not gc.isenabled()
        app = make_app(Config(), None, Session(host="offline"), session_path=None)
        app.settles_heap = sys.argv[1] == "settle"
        gc_policy.FULL_EVERY_S = 0.0  # every key's answer is followed by a full collection
        gc_policy.WORK_BEFORE_FULL = 0
        gc_policy.PAUSE_WINDOW_S = 60.0  # however late the answer frame (a loaded machine)
        before = gc.get_threshold()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.pause()
            await pilot.press("5", "1")
            await pilot.pause()
            print(json.dumps({"frozen": gc.get_freeze_count(), "before": before, "after": gc.get_threshold(),
                              "policy": [gc_policy.YOUNG_THRESHOLD, gc_policy.MIDDLE_THRESHOLD,
                                         gc_policy.OLD_THRESHOLD],
                              "after_keys": app.heap.collections if app.heap else 0,
                              "held": held, "enabled": gc.isenabled()}))

    asyncio.run(main())
""")


def run(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_program_freezes_its_start_up_heap_after_the_first_frame() -> None:
    seen = run("settle")
    assert seen["frozen"] > 10_000  # the widgets, styles and modules of the start-up
    assert seen["after"] == seen["policy"] and seen["after"] != seen["before"]
    assert seen["after_keys"] >= 2  # a full collection after each key's answer was on screen
    assert seen["held"] and seen["enabled"]  # no collection while it started, the collector back once settled


def test_an_app_built_for_tests_leaves_the_collector_as_python_set_it() -> None:
    seen = run("keep")
    assert seen["frozen"] == 0 and seen["after"] == seen["before"] and seen["after_keys"] == 0
    assert not seen["held"] and seen["enabled"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_keeper_collects_after_a_key_or_in_a_quiet_spell_at_most_every_few_seconds() -> None:
    from specdec_tui.ui import gc_policy

    clock = Clock()
    keeper = gc_policy.HeapKeeper(clock=clock, last_full=clock.now, last_key=clock.now)
    try:
        clock.now += gc_policy.FULL_EVERY_S / 2
        keeper.key_answered()
        assert keeper.collections == 0  # the last full collection is too recent
        clock.now += gc_policy.FULL_EVERY_S
        keeper.key_handled()
        keeper.answer_shown(more_input=True)
        assert keeper.collections == 0  # due, but the next key is already on its way: its answer comes first
        keeper.key_handled()
        clock.now += gc_policy.PAUSE_WINDOW_S * 2
        keeper.answer_shown()
        assert keeper.collections == 0  # due, but the answer came late: the next key is near
        keeper.key_answered()
        assert keeper.collections == 1  # due: right after the key's answer
        clock.now += gc_policy.QUIET_AFTER_S / 2
        keeper.middle_since_full = gc_policy.WORK_BEFORE_FULL  # the panel keeps allocating (a flood)
        keeper.tick()
        assert keeper.collections == 1  # keys are coming: the timer leaves it to the next key
        clock.now += gc_policy.FULL_EVERY_S
        keeper.tick()
        assert keeper.collections == 2  # no key for a while and due: the timer collects
        clock.now += gc_policy.FULL_EVERY_S
        gc.collect()  # CPython's own full collection counts as one
        clock.now += 0.1
        keeper.tick()
        assert keeper.collections == 2
        clock.now += 10 * gc_policy.FULL_EVERY_S
        keeper.tick()
        assert keeper.collections == 2  # idle: nothing was allocated since, nothing to collect
        keeper.middle_since_full = gc_policy.WORK_BEFORE_FULL  # as after a burst of work
        keeper.tick()
        assert keeper.collections == 3
    finally:
        keeper.close()
        gc.unfreeze()
    assert keeper._noticed not in gc.callbacks


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_full_collections_freeze_what_survives_and_a_quiet_spell_finds_the_cycles_among_it() -> None:
    """Each full collection walks only what came since the last (its survivors frozen: 45-65 ms a collection
    during a sweep before, with keys waiting); a cycle among frozen objects is found by the whole collection of a
    quiet spell, or after THAW_AT_MOST_FULLS frozen ones with keys coming all the time."""
    import weakref

    from specdec_tui.ui import gc_policy

    clock = Clock()
    keeper = gc_policy.HeapKeeper(clock=clock, last_full=clock.now, last_key=clock.now, last_whole=clock.now)

    def due() -> None:
        clock.now += gc_policy.FULL_EVERY_S
        keeper.middle_since_full = gc_policy.WORK_BEFORE_FULL

    try:
        cycle = Cycle()
        alive = weakref.ref(cycle)
        due()
        keeper.key_answered()
        assert keeper.collections == 1 and gc.get_freeze_count() > 0  # it survived, frozen
        del cycle  # garbage now, among the frozen
        due()
        keeper.key_answered()
        assert keeper.collections == 2 and alive() is not None  # a frozen collection does not walk it
        clock.now += gc_policy.THAW_QUIET_S / 2
        keeper.tick()
        assert alive() is not None and keeper.whole_collections == 0  # keys came a moment ago
        clock.now += gc_policy.THAW_QUIET_S
        keeper.tick()
        assert alive() is not None and keeper.whole_collections == 0  # quiet, but the panel just started
        clock.now += gc_policy.THAW_EVERY_S
        keeper.tick()
        assert alive() is None and keeper.whole_collections == 1  # a quiet spell: the whole heap, cycle found
        due()
        keeper.key_answered()
        clock.now += gc_policy.THAW_QUIET_S
        keeper.tick()
        assert keeper.whole_collections == 1  # not again within THAW_EVERY_S: it walks everything
        again = Cycle()
        alive = weakref.ref(again)
        due()
        keeper.key_answered()
        del again
        keeper.frozen_since_thaw = gc_policy.THAW_AT_MOST_FULLS  # keys all the time, never a quiet spell
        due()
        keeper.key_answered()
        assert alive() is None and keeper.whole_collections == 2
    finally:
        keeper.close()
        gc.unfreeze()


def test_the_panel_verb_holds_the_collector_while_it_starts_and_gives_it_back(monkeypatch) -> None:
    """`specdec-tui` (the panel) starts with the collector held, and it is back on when the start fails in words;
    `--demo --headless` (no panel) leaves it alone."""
    import argparse

    import pytest

    from specdec_tui.cli import tui_cmd
    from specdec_tui.cli.errors import CliError

    seen: list[bool] = []

    def start(args: argparse.Namespace) -> int:
        seen.append(gc.isenabled())
        raise CliError("no such host")

    monkeypatch.setattr(tui_cmd, "_run_panel", start)
    monkeypatch.setattr(tui_cmd, "run_demo", lambda args: seen.append(gc.isenabled()) or 0)
    with pytest.raises(CliError):
        tui_cmd.run(argparse.Namespace(demo=False, headless=False))
    assert seen == [False] and gc.isenabled()
    tui_cmd.run(argparse.Namespace(demo=True, headless=True))
    assert seen == [False, True]


async def test_a_due_full_collection_waits_until_the_key_has_been_handled_and_shown(monkeypatch) -> None:
    """The collection pauses the loop for 30-100 ms under a flood: run as soon as the App had handed the key on, the
    key's own widget waited for it (seen in bench/journal_flood.py's slowest keys: the collection started 2 ms after
    the key was posted). It runs once the key has gone all its way and its frame is drawn."""
    from textual.widgets import TabbedContent

    from specdec_tui.ui import gc_policy
    from tests.ui_helpers import offline_app, started

    app = offline_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        seen: list[str] = []
        monkeypatch.setattr(gc_policy.gc, "collect", lambda *args: seen.append(str(app.screen.query_one(TabbedContent).active)) or 0)
        # always due, however late the answer's frame and whatever collection CPython ran itself meanwhile (in a
        # long test run one came between the keeper's start and the key, and nothing was due)
        monkeypatch.setattr(gc_policy, "PAUSE_WINDOW_S", 60.0)
        monkeypatch.setattr(gc_policy, "FULL_EVERY_S", 0.0)
        monkeypatch.setattr(gc_policy, "WORK_BEFORE_FULL", 0)
        keeper = gc_policy.HeapKeeper()
        app.heap = keeper
        try:
            await pilot.press("2")
            for _ in range(20):
                await pilot.pause(0.05)
                if seen:
                    break
        finally:
            keeper.close()
    assert seen == ["journal"]  # one collection, and the journal tab was already there when it ran


START_IMPORTS = textwrap.dedent("""
    import gc, sys
    from specdec_tui.cli import main

    class Watch:  # notes whether the collector runs while the panel's start command is imported, then stops there
        def find_spec(self, name, path=None, target=None):
            if name == "specdec_tui.cli.tui_cmd":
                print("collector on" if gc.isenabled() else "collector held", flush=True)
                raise SystemExit(0)
            return None

    sys.meta_path.insert(0, Watch())
    main.main(sys.argv[1:])
""")


def test_a_panel_start_holds_the_collector_from_its_first_import_of_the_start_command() -> None:
    """The start command's imports (config, session, paths: ~25 young collections, ~6 ms on 2 cores) ran with the
    collector on; only `tui_cmd.run` held it."""
    done = subprocess.run([sys.executable, "-c", START_IMPORTS, "--demo"], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "collector held", done.stdout + done.stderr[-1000:]
    headless = subprocess.run([sys.executable, "-c", START_IMPORTS, "--demo", "--headless"], capture_output=True,
                              text=True, timeout=60)
    assert headless.stdout.strip() == "collector on"  # one trial printed, no panel: Python's collector as it is


LOADED = textwrap.dedent("""
    import asyncio, gc, json, sys
    from pathlib import Path
    from specdec_tui.core.config import Config
    from specdec_tui.core.results import Dist, LevelResult
    from specdec_tui.core.session import Session, Trial, save_session
    from specdec_tui.core.session_index import read_head
    from specdec_tui.ui.app import make_app
    from specdec_tui.ui import gc_policy

    async def main() -> None:
        path = Path(sys.argv[1])
        session = Session(host="offline")
        for i in range(1, 301):
            level = LevelResult(concurrency=1, requests=8, errors=0, output_tokens=800, duration_s=2.0,
                                output_tok_s=400.0 + i, per_request_tok_s=Dist(p50=100.0), ttft_ms=Dist(p50=40.0))
            session.add(Trial(id=i, unit_text="[Service]\\nExecStart=/x\\n", status="ok", levels=[level]))
        save_session(session, path)
        del session, level
        head, count = read_head(path)  # as the real program opens a saved session: its newest trial first
        gc_policy.hold_collections()
        app = make_app(Config(), None, head, session_path=path)
        app.trials_to_load = count
        app.settles_heap = sys.argv[2] == "settle"
        async with app.run_test(size=(80, 24)) as pilot:
            while app.session_load is None or not app.session_load.done or app.heap is None and app.settles_heap:
                await pilot.pause(0.05)
            await pilot.pause()
            walked = {id(o) for o in gc.get_objects()}  # the generations a full collection walks (not the frozen one)
            trials = app.session.trials
            print(json.dumps({"trials": len(trials),
                              "walked": sum(id(t) in walked or id(t.levels[0]) in walked for t in trials)}))

    asyncio.run(main())
""")


def test_a_long_sessions_trials_loaded_after_the_first_frame_are_frozen_too(tmp_path) -> None:
    """Issue 34: the real program opens a long session with its newest trial and loads the rest after the first
    frame (ui.session_load), i.e. after the start-up heap was frozen: a 1,000-trial session's result objects were
    then walked by every full collection the panel made, each one longer while keys waited."""
    done = subprocess.run([sys.executable, "-c", LOADED, str(tmp_path / "s.toml"), "settle"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"trials": 300, "walked": 0}
