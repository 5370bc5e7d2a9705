"""Theme files: the bundled ones build real Textual themes; bad files are all reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.theme import Theme

from specdec_tui.core.theme_files import (
    CSS_COLOR_NAMES,
    bundled_theme_dir,
    is_color,
    load_theme_files,
)


def test_bundled_themes_load_and_construct_textual_themes() -> None:
    specs, errors = load_theme_files(bundled_theme_dir())
    assert errors == []
    assert {spec.name for spec in specs} >= {"specdec-dark", "specdec-light"}
    for spec in specs:
        theme = Theme(**spec.as_kwargs())
        variables = theme.to_color_system().generate()  # resolves every colour and variable
        assert variables["primary"].lower() == Color.parse(spec.primary).hex.lower()
        assert theme.dark is (spec.name != "specdec-light")


def test_every_accepted_color_name_is_one_textual_parses() -> None:
    for name in CSS_COLOR_NAMES:
        Color.parse(name)
    for text in ("#abc", "#abcd", "#a1b2c3", "#a1b2c3d4", "rgb(10, 20, 30)", "rgba(10,20,30,0.5)"):
        assert is_color(text)
        Color.parse(text)
    for text in ("#abcde", "blurple", "rgb(1,2)", "", "#GGGGGG"):
        assert not is_color(text)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_all_bad_files_are_reported_together_with_lines(tmp_path: Path) -> None:
    good = write(tmp_path, "a-good.toml", 'name = "ok"\nprimary = "#112233"\ndark = false\n')
    syntax = write(tmp_path, "b-syntax.toml", 'name = "x"\nprimary = \n')
    unknown = write(tmp_path, "c-unknown.toml", 'name = "x"\nprimary = "#112233"\nprimery = "#000"\n')
    color = write(tmp_path, "d-color.toml", 'name = "x"\nprimary = "#112233"\n\nsurface = "blurple"\n')
    variable = write(tmp_path, "e-var.toml", 'name = "x"\nprimary = "red"\n[variables]\n"footer-key-foreground" = "12"\n')
    nameless = write(tmp_path, "f-nameless.toml", 'primary = "red"\n')
    specs, errors = load_theme_files(tmp_path)
    assert [spec.source for spec in specs] == [good]
    by_path = {error.path: error for error in errors}
    assert set(by_path) == {syntax, unknown, color, variable, nameless}
    assert by_path[syntax].line == 2 and "syntax" in by_path[syntax].message
    assert by_path[unknown].line == 3 and 'unknown field "primery"' in by_path[unknown].message
    assert by_path[color].line == 4 and "surface" in by_path[color].message
    assert str(by_path[variable]).startswith(f"{variable}:4: variables.footer-key-foreground")
    assert "missing name" in by_path[nameless].message


def test_user_dir_overrides_bundled_theme_of_same_name(tmp_path: Path) -> None:
    write(tmp_path, "mine.toml", 'name = "specdec-dark"\nprimary = "orange"\n')
    specs, errors = load_theme_files(bundled_theme_dir(), tmp_path, tmp_path / "missing-dir")
    assert errors == []
    dark = next(spec for spec in specs if spec.name == "specdec-dark")
    assert dark.primary == "orange" and dark.source == tmp_path / "mine.toml"


def test_duplicate_name_in_one_directory_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "one.toml", 'name = "same"\nprimary = "red"\n')
    two = write(tmp_path, "two.toml", 'name = "same"\nprimary = "blue"\n')
    specs, errors = load_theme_files(tmp_path)
    assert [spec.primary for spec in specs] == ["red"]
    assert [error.path for error in errors] == [two] and "already used" in errors[0].message


@pytest.mark.parametrize("value", ["$primary", "$accent 30%", "#ffffff20"])
def test_variables_accept_references_and_alpha(tmp_path: Path, value: str) -> None:
    write(tmp_path, "v.toml", f'name = "v"\nprimary = "red"\n[variables]\n"border" = "{value}"\n')
    specs, errors = load_theme_files(tmp_path)
    assert errors == [] and specs[0].variables == {"border": value}
