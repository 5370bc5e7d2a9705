"""Issue 17, point 6: say what will happen and what happened — the rollback question, a failed start's cause,
a demo unit whose Python is gone, the footer offline and on compare, a TOML syntax error, the failure wording."""

from __future__ import annotations

import pytest

from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import parse_config


def test_a_toml_syntax_error_names_its_own_lines_unclosed_header() -> None:
    text = 'default_host = "gpu"\nschema_version = 1\n[hosts.gpu\naddress = "h"\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    assert str(caught.value) == "cfg.toml:3: [hosts.gpu: TOML syntax error: the table header is not closed; write [hosts.gpu]"
    assert "default_host" not in str(caught.value)
