"""Config loading: the example loads, and every kind of mistake names its file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdec_tui.core.config import BenchProfile, Config
from specdec_tui.core.config_errors import ConfigError
from specdec_tui.core.config_file import find_config_path, load_config, parse_config, save_ui_theme
from specdec_tui.core.paths import default_config_file

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.toml")
    return info.value


def test_example_config_loads_with_the_documented_hosts_and_profiles() -> None:
    config = load_config(EXAMPLE)
    box = config.hosts["gpu-box"]
    assert (box.port, box.user, box.unit, box.api_key_env, box.sudo) == (22, "root", "sglang-qwen.service", "SGLANG_API_KEY", False)
    assert box.resolved_unit_path == "/etc/systemd/system/sglang-qwen.service"
    assert box.base_url.startswith("http://127.0.0.1")
    assert config.default_host == "gpu-box"
    assert config.profile().concurrency == (1, 4, 16, 32, 64)
    assert config.profiles["quick"].duration_s == 20.0 and config.profiles["quick"].requests is None
    assert config.profiles["realistic"].temperature == 0.7
    assert config.ui.theme == "specdec-dark"
    assert config.source == str(EXAMPLE)


def test_example_uses_no_real_private_address() -> None:
    text = EXAMPLE.read_text()
    for private in ("10.", "192.168.", "172.16."):
        assert f'"{private}' not in text and f"@{private}" not in text


def test_no_path_gives_defaults_and_missing_file_is_an_error(tmp_path: Path) -> None:
    assert load_config(None) == Config()
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")


def test_syntax_error_names_line_and_key() -> None:
    err = error_of('schema_version = 1\n\n[hosts.gpu]\naddress = "h"\nport = = 2\n')
    assert str(err).startswith("cfg.toml:5: hosts.gpu.port: TOML syntax error")


def test_unknown_key_names_its_line_and_suggests_the_right_one() -> None:
    err = error_of('schema_version = 1\n[hosts.gpu]\naddress = "h"\n\nprot = 22\n')
    assert str(err).startswith("cfg.toml:5: hosts.gpu.prot: unknown setting")
    assert 'did you mean "port"' in str(err)


def test_bad_type_says_what_to_write() -> None:
    err = error_of('[profiles.fast]\nmax_tokens = 64\ntemperature = "hot"\n')
    assert str(err) == 'cfg.toml:3: profiles.fast.temperature: expected a number, got "hot"; write temperature = 0.0'


def test_api_key_in_config_is_refused_with_the_way_out() -> None:
    err = error_of('# hosts\n[hosts.gpu]\naddress = "h"\napi_key = "sk-live-123"\n')
    assert str(err).startswith("cfg.toml:4: hosts.gpu.api_key: ")
    assert "api_key_env" in str(err) and "sk-live-123" not in str(err)


@pytest.mark.parametrize("key", ["api_key", "openai_api_key", "apikey", "token", "hf_token", "password"])
def test_every_secret_looking_key_is_refused(key: str) -> None:
    assert "api_key_env" in str(error_of(f'[hosts.gpu]\n{key} = "x"\n'))


def test_a_typo_ending_in_token_is_a_typo_not_a_secret() -> None:
    assert 'did you mean "max_tokens"' in str(error_of("[profiles.p]\nmax_token = 5\n"))


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        ("[hosts.a]\nport = 0\n", 2, "hosts.a.port", "between 1 and 65535"),
        ("[hosts.a]\nunit = \"sglang\"\n", 2, "hosts.a.unit", "systemd unit name"),
        ("[hosts.a]\napi_key_env = \"sk-abc-123\"\n", 2, "hosts.a.api_key_env", "NAME of an environment variable"),
        ("[profiles.p]\nconcurrency = [1, 0, 4]\n", 2, "profiles.p.concurrency", "positive"),
        ("[profiles.p]\nconcurrency = [1, 1]\n", 2, "profiles.p.concurrency", "twice"),
        ("[profiles.p]\nconcurrency = [1, 10000000]\n", 2, "profiles.p.concurrency", "more than the 4096 parallel"),
        ("[profiles.p]\nconcurrency = [1.5]\n", 2, "profiles.p.concurrency", "list of whole numbers"),
        ("[profiles.p]\ntemperature = -0.1\n", 2, "profiles.p.temperature", "0 or more"),
        ("[profiles.p]\nrequests = 4\nduration_s = 30\n", 3, "profiles.p.duration_s", "exactly one of"),
        ("[profiles.p]\nendpoint = \"embeddings\"\n", 2, "profiles.p.endpoint", '"completions", "chat"'),
        ("[ui]\nauto_bench = \"yes\"\n", 2, "ui.auto_bench", "true or false"),
        ("[ui.keymap]\nquit = 3\n", 2, "ui.keymap.quit", "quoted string"),
        ("default_host = \"nope\"\n[hosts.a]\n", 1, "default_host", 'no host "nope"'),
        ("default_profile = \"fast\"\n", 1, "default_profile", 'no profile "fast"'),
        ("hosts = 3\n", 1, "hosts", "[hosts.NAME]"),
    ],
)
def test_semantic_errors_point_at_the_key(text: str, line: int, key: str, words: str) -> None:
    err = error_of(text)
    assert (err.line, err.key) == (line, key)
    assert words in str(err)
    assert str(err).startswith(f"cfg.toml:{line}: {key}: ")


def test_newer_schema_version_is_explained() -> None:
    err = error_of("schema_version = 3\n")
    assert err.line == 1 and "newer specdec-tui" in str(err) and "upgrade" in str(err)


def test_profiles_keep_the_builtin_default_and_read_duration() -> None:
    config = parse_config('default_profile = "soak"\n[profiles.soak]\nduration_s = 300\nconcurrency = [8]\n')
    assert config.profiles["default"] == BenchProfile()
    soak = config.profile()
    assert (soak.name, soak.duration_s, soak.requests, soak.concurrency) == ("soak", 300.0, None, (8,))


def test_find_config_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_config_path(None) is None  # nothing configured, no default file
    default = default_config_file()
    default.parent.mkdir(parents=True, exist_ok=True)
    default.write_text("schema_version = 1\n")
    assert find_config_path(None) == default
    monkeypatch.setenv("SPECDEC_TUI_CONFIG", str(tmp_path / "env.toml"))
    assert find_config_path(None) == tmp_path / "env.toml"
    assert find_config_path(str(tmp_path / "cli.toml")) == tmp_path / "cli.toml"


def test_save_ui_theme_rewrites_only_the_theme_and_keeps_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(EXAMPLE.read_text())
    save_ui_theme(path, "specdec-light")
    after = path.read_text()
    assert load_config(path).ui.theme == "specdec-light"
    changed = [(a, b) for a, b in zip(EXAMPLE.read_text().splitlines(), after.splitlines(), strict=False) if a != b]
    assert changed == [('theme = "specdec-dark"', 'theme = "specdec-light"')]


def test_save_ui_theme_creates_a_minimal_file(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    save_ui_theme(path, "nord")
    config = load_config(path)
    assert config.ui.theme == "nord" and config.hosts == {}
