"""`[ui.keymap]` is checked when the panel starts: a remap that takes a key another binding of the same screen
answers to (quit's `q` above all) is said in words, and the ids of the journal's own keys are known ids."""

from __future__ import annotations

from specdec_tui.core.config import UIConfig

from .ui_helpers import offline_app, record_notifications, started


async def said_at_start(keymap: dict[str, str]) -> list[str]:
    """Everything an offline panel with `keymap` as its `[ui.keymap]` says by the end of its start."""
    app = offline_app()
    app.config = type(app.config)(ui=UIConfig(keymap=keymap))
    app.effective_keymap = dict(keymap)
    seen = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.pause()
    return seen


async def test_a_remap_onto_quits_key_is_said_and_names_both_bindings() -> None:
    seen = await said_at_start({"push": "q"})
    said = " ".join(seen)
    assert "[ui.keymap]" in said and "q" in said and "push" in said and "quit" in said, seen


async def test_the_journals_own_ids_are_not_called_unknown_and_a_clean_keymap_says_nothing() -> None:
    seen = await said_at_start({"journal.follow": "F", "push": "ctrl+t"})
    assert not [s for s in seen if "[ui.keymap]" in s], seen


async def test_a_binding_left_with_no_key_is_said() -> None:
    seen = await said_at_start({"push": " , "})
    assert any("[ui.keymap] leaves push with no key" in s for s in seen), seen


def test_a_keymap_value_that_is_no_string_is_refused_with_an_example_that_is_not_quits_key() -> None:
    import pytest

    from specdec_tui.core.config_errors import ConfigError
    from specdec_tui.core.config_file import parse_config

    with pytest.raises(ConfigError) as refused:
        parse_config("[ui.keymap]\npush = 5\n")
    assert 'write push = "ctrl+t"' in str(refused.value) and "ctrl+q" not in str(refused.value)
