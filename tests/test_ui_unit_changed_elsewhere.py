"""Issue 35, point 1's last part: a push from another terminal is noticed. The panel reads the host's unit again
(every few seconds while idle, when the terminal gets the focus back, and before `p`): with no edit the form
follows it and says so; with an edit the operator is asked (keep mine / take the host's / show diff) and nothing is
pushed over it silently. The demo's own port rewrite is no change at all. Pilot, against the real simulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.hosts.local.host import LocalHost
from specdec_tui.hosts.local.workspace import ensure_demo_workspace, free_port, unit_port, with_port
from specdec_tui.loop.busy import UnitChangedElsewhere
from specdec_tui.loop.events import UnitLoaded
from specdec_tui.loop.states import Busy, UnitChange
from specdec_tui.loop.trial import TrialLoop
from specdec_tui.ui import host_link
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.unit_changed_screen import UnitChangedScreen
from specdec_tui.ui.widgets.flag_form import widget_id

from .conftest import DEMO_TEST_PROFILE
from .ui_helpers import demo_app, demo_ready, demo_unit_file, record_notifications, wait_for

MAX_RUNNING = "max-running-requests"
CHUNKED = "chunked-prefill-size"


def other_terminal_sets(unit_file: Path, flag: str, value: str) -> str:
    """What another terminal does: writes the unit file with one flag changed (then daemon-reload, which the
    local host's next restart does by itself). Returns the text written."""
    text = UnitFile.parse(unit_file.read_text()).set_flag(flag, value).text
    unit_file.write_text(text)
    return text


def field_value(app: object, flag: str) -> str:
    return str(app.config_pane.query_one(f"#{widget_id('field', flag)}").value)  # type: ignore[attr-defined]


async def type_edit(pilot: object, app: object, flag: str, keys: str) -> None:
    app.config_pane.query_one(f"#{widget_id('field', flag)}").focus()  # type: ignore[attr-defined]
    await pilot.press("end", *keys)  # type: ignore[attr-defined]
    await pilot.press("escape")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: app.config_pane.dirty, "the edit to land in the unit")  # type: ignore[arg-type,attr-defined]


async def no_periodic_read(pilot: object, app: object) -> None:
    """Stop the periodic re-read, so the change is found by what the test does next (p), not by the timer."""
    app.workers.cancel_group(app, "unit-watch")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: not [w for w in app.workers  # type: ignore[arg-type,attr-defined]
                                       if w.group == "unit-watch" and not w.is_finished], "the periodic read to stop")


def demo_and_its_unit(tmp_path: Path) -> tuple[SpecdecApp, Path, list[str]]:
    """The demo panel, its unit file (what another terminal writes) and the notifications it shows."""
    app = demo_app(tmp_path)
    return app, demo_unit_file(tmp_path), record_notifications(app)


async def ask_over_another_push(pilot: Pilot, app: SpecdecApp, unit_file: Path) -> tuple[str, str]:
    """An edit typed, then another terminal's push (found by `p`, not the timer), then `p`: the question is shown.
    Returns the edit's value of MAX_RUNNING and the unit the other terminal wrote."""
    await type_edit(pilot, app, MAX_RUNNING, "7")
    mine = UnitFile.parse(app.config_pane.text).flags()[MAX_RUNNING]
    await no_periodic_read(pilot, app)
    theirs = other_terminal_sets(unit_file, CHUNKED, "1024")
    await pilot.press("p")
    await wait_for(pilot, lambda: isinstance(app.screen, UnitChangedScreen), "the question")
    return mine, theirs


async def test_a_unit_changed_by_another_terminal_reaches_the_form_when_there_is_no_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_link, "UNIT_CHECK_S", 0.2)
    app, unit_file, seen = demo_and_its_unit(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        pane = app.config_pane
        written = other_terminal_sets(unit_file, CHUNKED, "1024")
        await wait_for(pilot, lambda: pane.running_text == written, "the periodic check to read the new unit")
        await pilot.pause()
        assert field_value(app, CHUNKED) == "1024" and not pane.dirty and pane.diff == ""
        assert any("changed outside this panel" in n and "the form shows it now" in n for n in seen)


async def test_focus_coming_back_reads_the_unit_again(tmp_path: Path) -> None:
    app, unit_file, seen = demo_and_its_unit(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        written = other_terminal_sets(unit_file, CHUNKED, "2048")
        app.post_message(events.AppFocus())  # the terminal is in front again (the periodic check is 5 s away)
        await wait_for(pilot, lambda: app.config_pane.running_text == written, "the unit read on focus", steps=60)
        await pilot.pause()  # the form's new field is mounted after the text is taken (as in the test above)
        assert field_value(app, CHUNKED) == "2048"


async def test_p_over_another_terminals_push_asks_and_pushes_nothing_until_answered(tmp_path: Path) -> None:
    app, unit_file, seen = demo_and_its_unit(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        pane = app.config_pane
        mine, theirs = await ask_over_another_push(pilot, app, unit_file)
        screen = app.screen
        question = str(screen.query_one("#unit-changed-question").render())
        assert "changed outside this panel" in question and "Nothing was pushed." in question
        assert unit_file.read_text() == theirs  # nothing pushed over it
        assert pane.running_text == theirs and pane.dirty  # the edit kept, its diff against the host's new unit
        await pilot.press("s")
        await pilot.pause()
        diff = screen.query_one("#unit-changed-diff")
        assert diff.display
        shown = str(diff.query_one("Static").render())
        assert f"--{CHUNKED}" in shown.split("Your edit")[0] and "1024" in shown
        assert f"--{MAX_RUNNING}" in shown.split("Your edit")[1]
        await pilot.press("t")
        await wait_for(pilot, lambda: app.screen is app.main and not pane.dirty, "the host's unit in the form")
        assert pane.text == theirs and field_value(app, CHUNKED) == "1024"
        assert UnitFile.parse(pane.text).flags().get(MAX_RUNNING) != mine
        assert unit_file.read_text() == theirs
    assert app.trial_loop is None or app.trial_loop.busy is Busy.IDLE


async def test_keep_mine_pushes_the_edit_once_asked(tmp_path: Path) -> None:
    app, unit_file, seen = demo_and_its_unit(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        mine, _ = await ask_over_another_push(pilot, app, unit_file)
        await pilot.press("k")
        await wait_for(pilot, lambda: UnitFile.parse(unit_file.read_text()).flags().get(MAX_RUNNING) == mine,
                       "the edit pushed", steps=1200)
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and any(n.startswith("Server is healthy") for n in seen[-3:]),
                       "the restart", steps=1200)


async def test_the_demos_port_rewrite_is_no_change_and_a_push_keeps_the_new_port(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_link, "UNIT_CHECK_S", 0.2)
    app, unit_file, seen = demo_and_its_unit(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        pane = app.config_pane
        await type_edit(pilot, app, MAX_RUNNING, "7")
        old_port = unit_port(pane.running_text)
        assert old_port is not None
        # What a second panel's start writes when the port is taken (hosts.local.workspace): the port alone.
        new_port = free_port()
        rewritten = with_port(unit_file.read_text(), new_port)
        unit_file.write_text(rewritten)
        await wait_for(pilot, lambda: pane.running_text == rewritten, "the check to read the rewritten unit")
        await pilot.pause()
        before = len(seen)
        assert not isinstance(app.screen, UnitChangedScreen)
        assert unit_port(pane.text) == new_port  # carried into the edit, not a change
        assert not [line for line in pane.diff.splitlines() if line[:1] in "+-" and "--port" in line]
        assert not any("changed outside" in n for n in seen)
        assert not any("changed outside" in n for n in seen[before:])


async def test_a_push_carries_the_demos_port_rewrite_and_refuses_someone_elses_change(tmp_path: Path) -> None:
    """The re-read before a push (the loop's half of `p`): the port rewrite alone is carried into what is pushed
    (the old, taken port is not put back); a change by anyone else pushes nothing and says so in an event."""
    ws = ensure_demo_workspace(tmp_path / "ws", time_scale=25)
    new_port = free_port()
    host = LocalHost(ws.root, ws.unit_name, f"http://127.0.0.1:{new_port}", name="demo")
    loop = TrialLoop(host=host, session=Session(host="demo", unit=ws.unit_name, profile=DEMO_TEST_PROFILE),
                     profile=DEMO_TEST_PROFILE, base_url=f"http://127.0.0.1:{new_port}", session_path=None,
                     healthy_timeout_s=60)
    events: list[object] = []
    loop.sink = events.append
    try:
        read = await loop.read_running()
        edit = UnitFile.parse(read).set_flag(MAX_RUNNING, "17").text
        ws.unit_path.write_text(with_port(read, new_port))  # a second start found the port taken
        trial = await loop.push_and_restart(edit, expected=read)
        on_host = ws.unit_path.read_text()
        assert trial.status == "running" and not trial.failure and unit_port(on_host) == new_port  # pushed, healthy
        assert on_host == with_port(edit, new_port)
        assert [e for e in events if isinstance(e, UnitLoaded)] == [UnitLoaded(with_port(read, new_port), UnitChange.PORT)]
        # Someone else's change: nothing pushed, the loop now knows the host's unit, the panel is told.
        theirs = UnitFile.parse(on_host).set_flag(CHUNKED, "1024").text
        ws.unit_path.write_text(theirs)
        with pytest.raises(UnitChangedElsewhere):
            await loop.push_and_restart(UnitFile.parse(on_host).set_flag(MAX_RUNNING, "18").text, expected=on_host)
        assert ws.unit_path.read_text() == theirs and loop.running_text == theirs
        assert [e for e in events if isinstance(e, UnitLoaded)][-1] == UnitLoaded(theirs, UnitChange.ELSEWHERE, refused_push=True)
        assert loop.busy is Busy.IDLE
    finally:
        await host.close()


async def test_a_trial_pushed_and_never_measured_is_not_left_running_when_the_panel_quits(tmp_path: Path) -> None:
    """Newcomer pass (issue 35): `session show` listed a trial "running" of a panel long gone (pushed, healthy,
    never benchmarked, then the panel quit). It ends as it is, as the next push would end it."""
    from specdec_tui.core.session import load_session

    path = tmp_path / "session.toml"
    app = demo_app(tmp_path, session_path=path)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await demo_ready(pilot, seen)
        await type_edit(pilot, app, MAX_RUNNING, "7")
        await pilot.press("p")
        await wait_for(pilot, lambda: app.busy is Busy.IDLE and sum(n.startswith("Server is healthy") for n in seen) == 2,
                       "the push to end healthy", steps=1200)
        trial = app.trial_loop.trial if app.trial_loop is not None else None
        assert trial is not None and trial.status == "running" and not trial.levels
    statuses = [t.status for t in load_session(path).trials]
    assert statuses and "running" not in statuses, statuses
