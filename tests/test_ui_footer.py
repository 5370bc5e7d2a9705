"""The footer rebuilds only when what it shows changes (a focus move used to rebuild it every time)."""

from __future__ import annotations

from specdec_tui.ui.widgets.stable_footer import StableFooter
from tests.ui_helpers import offline_app


async def test_footer_keeps_its_keys_across_focus_moves_and_rebuilds_on_a_remap() -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(StableFooter)
        keys_before = list(footer.query("FooterKey"))
        assert keys_before, "the footer shows the loop's keys"
        await pilot.press("2")  # Journal tab: the focus moves into the log
        await pilot.press("4")  # Bench tab: and into the table
        await pilot.pause()
        assert list(footer.query("FooterKey")) == keys_before  # same widgets: nothing was rebuilt
        app.set_keymap({"help": "ctrl+t"})  # (offline the footer offers no push: remap a key it shows)
        await pilot.pause()
        await pilot.pause()
        texts = " ".join(str(key.render()) for key in footer.query("FooterKey"))
        assert "^t" in texts  # a change of what is shown still rebuilds it
