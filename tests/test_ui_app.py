"""The app shell: bindings and help, push refusal, draft restore, themes, and the whole loop on the demo host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from textual.widgets import DataTable, Input

from specdec_tui.bench.events import BenchEvent
from specdec_tui.core import drafts
from specdec_tui.core.config import BenchProfile, UIConfig
from specdec_tui.core.config_file import load_config
from specdec_tui.core.unit import UnitFile
from specdec_tui.loop.session_saver import saver_for
from specdec_tui.loop.states import Busy
from specdec_tui.ui.keymap import APP_BINDINGS, MAIN_SCREEN_BINDINGS, bindings_of, described
from specdec_tui.ui.screens.confirm_screen import ConfirmScreen
from specdec_tui.ui.screens.help_screen import HelpScreen
from specdec_tui.ui.widgets.flag_form import widget_id
from specdec_tui.ui.widgets.unit_editor import UnitEditor

from .ui_helpers import demo_app, demo_ready, demo_unit_file, footer_text, offline_app, record_notifications, started, wait_for


def help_table_rows(app) -> list[list[str]]:
    table = app.screen.query_one("#help-table", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_every_binding_has_an_id_and_is_in_help_with_current_keys() -> None:
    app = offline_app()
    app.config = type(app.config)(ui=UIConfig(keymap={"push": "ctrl+t"}))
    app.effective_keymap = {"push": "ctrl+t"}
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = [(row[2], row[3]) for row in help_table_rows(app)]
        assert len(listed) == len(set(listed))  # a binding is one row, whatever number of keys it has
        rows = {row[2]: row for row in help_table_rows(app)}
        for binding in bindings_of([*APP_BINDINGS, *MAIN_SCREEN_BINDINGS]):
            assert binding.id, f"binding {binding.action} has no id"
            assert binding.id in rows
        # keys written as the footer writes them
        assert rows["push"][0] == "^t"
        assert rows["help"][0] == "?"
        assert rows["tab-journal"][0] == "2"
        assert rows["cancel"][0] == "esc, c" and rows["quit"][0] == "q, ^q"
        assert rows["help-close"][0] == "esc, q, ?"
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_tabs_switch_by_number() -> None:
    app = offline_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.screen.query_one("#tabs").focus()
        await pilot.press("4")
        assert app.screen.query_one("#tabs").active == "bench"
        await pilot.press("5")
        assert app.screen.query_one("#tabs").active == "trials"


async def test_validation_error_blocks_push(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        # the demo starts its inactive service by itself once the unit has loaded: let that start end, so what the
        # refused push leaves behind (nothing running) is the push's doing
        await wait_for(pilot, lambda: app.config_pane.running_text != "" and app.busy is Busy.IDLE
                       and any(n.startswith("Server is healthy") for n in seen), "the unit to load and the start to end",
                       steps=1200)
        editor = app.screen.query_one(UnitEditor)
        # 0.5.23 gone: --cuda-graph-max-bs is an ambiguous prefix there (the push is refused with argparse's words)
        editor.text = editor.text.replace("--speculative-eagle-topk 1", "--speculative-eagle-topk 1 --cuda-graph-max-bs 8")
        await pilot.pause()
        await pilot.press("escape", "p")
        await pilot.pause()
        refused = [n for n in seen if n.startswith("Push refused")]
        assert refused and "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode" in refused[0]
        assert app.busy is Busy.IDLE
        assert (demo_unit_file(tmp_path)).read_text() == app.config_pane.running_text


async def test_draft_is_offered_and_restored(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    running = (demo_unit_file(tmp_path)).read_text()
    draft = running.replace("--speculative-num-steps 1", "--speculative-num-steps 2")
    drafts.save_draft("demo", "sglang-demo.service", draft)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the restore question")
        # The question says what the draft changes against the host's unit (issue 35, point 5).
        question = str(app.screen.query_one("#confirm-question").render())
        assert "it changes:\n  --speculative-num-steps: 1 → 2\nRestore it?" in question
        await pilot.press("y")
        await wait_for(pilot, lambda: app.config_pane.text == draft, "the draft in the editor")
        assert "+    --speculative-num-steps 2 \\" in app.config_pane.diff


async def test_d_discards_the_edit_and_its_draft(tmp_path: Path) -> None:
    """Issue 34: the panel had no way back to the host's unit but undoing by hand. `d` (id discard-edit) is in the
    footer while there is an edit, and puts the form, editor and diff back on the host's unit; the draft is gone, so
    the next start offers nothing."""
    app = demo_app(tmp_path)
    running = (demo_unit_file(tmp_path)).read_text()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.config_pane.running_text == running, "the host's unit")
        assert "Discard" not in footer_text(app)
        await app.config_pane.set_flag("speculative-num-steps", "3")
        app.config_pane.flush_draft()
        assert drafts.load_draft("demo", "sglang-demo.service") is not None
        await wait_for(pilot, lambda: "Discard edit" in footer_text(app), "the discard key in the footer")
        await pilot.press("escape", "d")  # out of the form's field, so d is a key
        await wait_for(pilot, lambda: not app.has_unpushed_edit, "the edit discarded")
        assert app.config_pane.text == running and app.config_pane.diff == ""
        assert drafts.load_draft("demo", "sglang-demo.service") is None
        await wait_for(pilot, lambda: "Discard" not in footer_text(app), "the discard key gone")


async def test_theme_switch_is_applied_and_saved(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('# my settings\n[ui]\ntheme = "specdec-dark"\n')
    app = offline_app()
    app.config = load_config(config_file)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        assert {"specdec-dark", "specdec-light", "textual-light"} <= set(app.available_themes)
        assert app.theme == "specdec-dark"
        app.theme = "specdec-light"
        await pilot.pause()
    assert load_config(config_file).ui.theme == "specdec-light"
    assert config_file.read_text().startswith("# my settings")


async def test_whole_loop_push_restart_bench_record_rollback(tmp_path: Path) -> None:
    session_file = tmp_path / "session.toml"
    app = demo_app(tmp_path, session_path=session_file)
    seen = record_notifications(app)
    unit_file = demo_unit_file(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.config_pane.running_text != "", "the unit to load")
        # the demo starts its service by itself; push once that start is done
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen),
                       "the demo start", steps=1200)
        seen.clear()
        original = app.config_pane.running_text
        steps = app.screen.query_one(f"#{widget_id('field', 'speculative-num-steps')}", Input)
        steps.focus()
        await pilot.press("end", "backspace", "2")
        await pilot.pause()
        await pilot.press("escape")  # leaves the field, so p is a key again
        assert not isinstance(app.focused, Input)
        await pilot.press("p")
        await wait_for(pilot, lambda: any(n.startswith("Server is healthy") for n in seen), "healthy after push", steps=1200)
        assert "--speculative-num-steps 2" in unit_file.read_text()
        assert UnitFile.parse(unit_file.read_text()).flags()["speculative-num-steps"] == "2"
        await pilot.press("b")
        await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark", steps=1200)
        trial = app.session.trials[-1]
        assert trial.status == "ok"
        assert [lv.concurrency for lv in trial.levels] == [1, 4]
        assert all(lv.output_tok_s > 0 for lv in trial.levels)
        table = app.screen.query_one("#bench-table")
        assert float(table.cell_text(1, "tok_s").replace(",", "")) > 0
        saver_for(session_file).flush(timeout_s=60)  # the panel writes it off its event loop
        assert session_file.exists() and "speculative-num-steps" in session_file.read_text()
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the rollback question")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.config_pane.running_text == original and app.busy is Busy.IDLE, "the rollback", steps=1200)
        assert unit_file.read_text() == original


async def test_b_with_an_unpushed_edit_says_the_benchmark_runs_the_unit_that_runs_now(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        await app.config_pane.set_flag("speculative-num-steps", "3")
        await pilot.pause()
        assert app.has_unpushed_edit
        await pilot.press("escape", "b")  # out of the form's field, so b is a key
        await wait_for(pilot, lambda: any(n.startswith("Benchmark done") for n in seen), "the benchmark", steps=1200)
        assert any(n.startswith("Benchmarking the unit that runs now: your edit is not pushed") for n in seen), seen
        assert app.session.trials[-1].flags["speculative-num-steps"] == "1"  # what ran, as the notice said


# -- snapshots: an offline session (no clocks, ports or PIDs on screen) at both sizes, two themes ----
import pytest  # noqa: E402


@pytest.mark.parametrize("theme", ["specdec-dark", "textual-light"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_main_screen_snapshot(snap_compare, theme: str, size: tuple[int, int]) -> None:
    async def settled(pilot) -> None:  # let mount-time refreshes finish before the picture
        await started(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(offline_app(theme=theme), terminal_size=size, run_before=settled)


async def test_footer_fits_80_columns_on_every_tab_and_hidden_keys_are_in_help_and_palette(tmp_path: Path) -> None:
    from textual.widgets import Footer

    from specdec_tui.ui.commands import palette_entries
    from specdec_tui.ui.keymap import JOURNAL_BINDINGS

    app = demo_app(tmp_path)  # with a host: offline the footer does not offer the loop's keys
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.trial_loop is not None, "the loop")
        for tab in "12345":
            await pilot.press(tab)
            await pilot.pause(0.1)
            keys = list(app.screen.query_one(Footer).query("FooterKey"))
            palette_key = next(k for k in keys if k.has_class("-command-palette"))
            others = [k for k in keys if k is not palette_key]
            shown = " ".join(f"{k.key_display} {k.description}" for k in others)
            for needed in ("p Push", "r Restart", "u Rollback", "b Bench", "esc Cancel", "? Help", "^q Quit"):
                assert needed in shown, (tab, shown)
            assert max(k.region.right for k in others) <= palette_key.region.x, (tab, shown)  # nothing cut
            assert palette_key.region.right <= 80
        everything = bindings_of([*APP_BINDINGS, *MAIN_SCREEN_BINDINGS, *JOURNAL_BINDINGS])
        titles = {entry.title for entry in palette_entries(app)}
        await pilot.press("question_mark")
        await pilot.pause()
        ids = {row[2] for row in help_table_rows(app)}
        for binding in everything:
            assert binding.id in ids, binding.id
            assert described(binding) in titles, binding.description  # the tooltip where the footer's words are short
        await pilot.press("escape")
        await pilot.press("1")
        for entry in palette_entries(app):  # the journal's keys also work from the palette
            if entry.title == "Follow journal":
                await entry.run()
        await pilot.pause()
        assert app.screen.query_one("#tabs").active == "journal"


async def test_p_during_a_benchmark_asks_then_cancels_it_and_pushes_the_edit(tmp_path: Path) -> None:
    """`HostActions.push` (handed the panel's members, not the app): with a benchmark running, p asks first; yes
    cancels the benchmark (its trial recorded cancelled) and, once that is recorded, pushes the edit — asked once,
    though the benchmark takes frames to stop (a loaded machine's engine closing its requests: CI saw the push run a
    frame after the cancel, find the benchmark still running and ask again, the edit never pushed)."""
    app = demo_app(tmp_path)
    seen = record_notifications(app)
    unit_file = demo_unit_file(tmp_path)
    release = asyncio.Event()
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        assert app.trial_loop is not None
        app.trial_loop.use_profile(BenchProfile(concurrency=(1,), requests=100_000, warmup=0, max_tokens=64))  # runs till cancelled
        engine_events = app.trial_loop._bench_events

        async def slow_to_stop(profile: BenchProfile) -> AsyncIterator[BenchEvent]:
            try:
                async for event in engine_events(profile):
                    yield event
            except asyncio.CancelledError:
                await release.wait()  # the engine still closing its requests
                raise

        app.trial_loop._bench_events = slow_to_stop  # type: ignore[method-assign]
        await app.config_pane.set_flag("speculative-num-steps", "3")
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: app.bench_running, "the benchmark to start", steps=1200)
        seen.clear()
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert "A benchmark is running" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("y")
        for _ in range(10):  # frames go by while the benchmark stops
            await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen), "asked again while the benchmark stopped"
        release.set()
        await wait_for(pilot, lambda: any(n.startswith("Server is healthy") for n in seen), "healthy after the push",
                       steps=2400)
        assert not isinstance(app.screen, ConfirmScreen)
        assert UnitFile.parse(unit_file.read_text()).flags()["speculative-num-steps"] == "3"
        cancelled = [t for t in app.session.trials if t.status == "cancelled"]
        assert [t.flags["speculative-num-steps"] for t in cancelled] == ["1"]  # the benchmark of the unit before
