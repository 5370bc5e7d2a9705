"""Issue 35, point 1 on a real host: the panel on an SSH host (the lab's sshd + systemd) notices a push made from
another terminal (the unit file written by hand, then `systemctl daemon-reload`): with no edit the form follows
it; with an edit, `p` pushes nothing over it and asks. Skips where the lab cannot run; fails under CI=true."""

from __future__ import annotations

import pytest

from specdec_tui.core.config import Config
from specdec_tui.core.session import Session
from specdec_tui.core.unit import UnitFile
from specdec_tui.ui import host_link
from specdec_tui.ui.app import make_app
from specdec_tui.ui.screens.unit_changed_screen import UnitChangedScreen
from specdec_tui.ui.widgets.flag_form import widget_id
from tests.hostlab.fixtures import UNIT

from .ui_helpers import record_notifications, started, wait_for

pytestmark = [pytest.mark.sshd, pytest.mark.systemd, pytest.mark.timeout(180)]


def another_terminal_pushes(lab, path: str, text: str) -> None:  # noqa: ANN001 - the lab's own class
    lab.run(["tee", path], input=text)
    lab.run(["systemctl", "daemon-reload"])


async def test_the_panel_on_an_ssh_host_notices_a_push_from_another_terminal(
        make_ssh_host, hostlab, lab_service, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(host_link, "UNIT_CHECK_S", 0.3)
    host = make_ssh_host()
    config = Config(hosts={"lab": host.config})
    app = make_app(config, host, Session(host="lab", unit=UNIT), session_path=None)
    seen = record_notifications(app)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        pane = app.config_pane
        await wait_for(pilot, lambda: pane.running_text == lab_service.text, "the unit read over SSH", steps=600)
        # No edit: the form follows the other terminal's push.
        theirs = UnitFile.parse(lab_service.text).set_flag("speculative-num-steps", "5").text
        another_terminal_pushes(hostlab, lab_service.path, theirs)
        await wait_for(pilot, lambda: pane.running_text == theirs, "the periodic check over SSH", steps=600)
        assert not pane.dirty and any("changed outside this panel" in n for n in seen)
        # An edit, then another push from elsewhere, then p: nothing pushed over it, the operator is asked.
        field = pane.query_one(f"#{widget_id('field', 'speculative-num-draft-tokens')}")
        field.focus()
        await pilot.press("end", "ctrl+u", "6", "escape")  # steps 5 + 1
        await wait_for(pilot, lambda: pane.dirty, "the edit")
        app.workers.cancel_group(app, "unit-watch")  # p itself must find it (no periodic read in between)
        await wait_for(pilot, lambda: not [w for w in app.workers if w.group == "unit-watch" and not w.is_finished],
                       "the periodic read to stop")
        again = UnitFile.parse(theirs).set_flag("chunked-prefill-size", "4096").text
        another_terminal_pushes(hostlab, lab_service.path, again)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, UnitChangedScreen), "the question", steps=600)
        assert lab_service.read_on_host().decode() == again
        assert "Nothing was pushed." in str(app.screen.query_one("#unit-changed-question").render())
        await pilot.press("t")
        await wait_for(pilot, lambda: app.screen is app.main and not pane.dirty and pane.text == again,
                       "the host's unit in the form")
