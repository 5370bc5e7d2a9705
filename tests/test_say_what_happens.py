"""Issue 17, point 6: say what will happen and what happened — the rollback question, a failed start's cause,
a demo unit whose Python is gone, the footer offline and on compare, a TOML syntax error, the failure wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config
from specdec_tui.core.session import Session, Trial
from specdec_tui.ui.app import SpecdecApp
from specdec_tui.ui.screens.compare_screen import CompareScreen

from .ui_helpers import OFFLINE_UNIT, demo_app, offline_app, wait_for


def test_a_toml_syntax_error_names_its_own_lines_unclosed_header() -> None:
    text = 'default_host = "gpu"\nschema_version = 1\n[hosts.gpu\naddress = "h"\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    assert str(caught.value) == "cfg.toml:3: [hosts.gpu: TOML syntax error: the table header is not closed; write [hosts.gpu]"
    assert "default_host" not in str(caught.value)


# -- the footer offers only what can happen there ------------------------------------------------------------

LOOP_KEYS = ("Push", "Restart", "Rollback", "Bench")


def footer_text(app: SpecdecApp) -> str:
    return " ".join(str(key.render()) for key in app.screen.query("FooterKey"))


async def test_offline_the_footer_offers_no_push_restart_rollback_or_bench() -> None:
    app = offline_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        text = footer_text(app)
        assert "Help" in text and "Quit" in text
        assert not [k for k in LOOP_KEYS if k in text], text


async def test_on_the_compare_screen_the_footer_offers_no_push_restart_or_bench(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.loop is not None, "the loop")
        await pilot.pause()
        assert all(k in footer_text(app) for k in LOOP_KEYS)  # on the main screen, with a host, they are offered
        trials = [Trial(id=1, unit_text=OFFLINE_UNIT, label="a"), Trial(id=2, unit_text=OFFLINE_UNIT, label="b")]
        app.push_screen(CompareScreen(Session(host="demo", trials=trials), 1, 2))
        await pilot.pause()
        await pilot.pause()
        text = footer_text(app)
        assert "Back" in text
        assert not [k for k in LOOP_KEYS if k in text], text
