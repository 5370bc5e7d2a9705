"""Arrow keys on an empty table (a new session's Trials tab, a Fleet tab with no hosts) move nothing and stop
nothing: Textual reports a highlight of row -1 with no row key there, which the handlers read as a row and the
panel fell over with a traceback."""

from __future__ import annotations

from textual.widgets import DataTable, TabbedContent

from specdec_tui.core.config import Config, UIConfig
from specdec_tui.core.session import Session
from specdec_tui.ui.app import make_app

from .ui_helpers import started, wait_for


async def test_arrow_keys_on_the_empty_trials_and_fleet_tables_leave_the_panel_running() -> None:
    app = make_app(Config(ui=UIConfig()), None, Session(host="demo", unit="sglang-demo.service"), session_path=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        tabs = app.main.query_one(TabbedContent)
        for key, tab, table_id in (("5", "trials", "trials-data"), ("6", "fleet", "fleet-data")):
            await pilot.press(key)
            await wait_for(pilot, lambda tab=tab, table_id=table_id: tabs.active == tab and app.focused is not None
                           and app.focused.id == table_id, f"the {tab} table focused")
            table = app.main.query_one(f"#{table_id}", DataTable)
            assert table.row_count == 0
            await pilot.press("down", "up", "down", "end", "home", "enter")
            await pilot.pause()
            assert app.is_running and app.main.trials_list.current_trial_id is None
