"""Theme TOML files → `ThemeSpec`s the UI turns into `textual.theme.Theme(**spec.as_kwargs())`.

Validation happens here, without importing Textual, so a typo in a user's theme file is reported
in words (file, line, field) before the UI starts, and every bad file is reported at once.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specdec_tui.core.regular_file import read_regular_text

__all__ = ["ThemeSpec", "ThemeFileError", "bundled_theme_dir", "user_theme_dir", "load_theme_files", "is_color"]

COLOR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
ALL_FIELDS = ("name", *COLOR_FIELDS, "dark", "luminosity_spread", "text_alpha", "variables")

# The CSS named colours (CSS Color Module Level 4), which Textual's Color.parse also accepts.
CSS_COLOR_NAMES = frozenset(
    """
    aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown
    burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan
    darkgoldenrod darkgray darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid
    darkred darksalmon darkseagreen darkslateblue darkslategray darkslategrey darkturquoise darkviolet
    deeppink deepskyblue dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro
    ghostwhite gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo ivory khaki
    lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan lightgoldenrodyellow
    lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray
    lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine
    mediumblue mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise
    mediumvioletred midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab
    orange orangered orchid palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru
    pink plum powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
    seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen steelblue tan
    teal thistle tomato turquoise violet wheat white whitesmoke yellow yellowgreen
    """.split()
)

_HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
_NUM = r"\s*-?\d+(?:\.\d+)?%?\s*"
_RGB = re.compile(rf"rgba?\({_NUM},{_NUM},{_NUM}(?:,{_NUM})?\)", re.IGNORECASE)
# compiled by `re` on first use: only a theme with a [variables] table needs them
_VARIABLE_REF = r"\$[a-z][a-z0-9-]*(?:\s+\d+(?:\.\d+)?%)?"
_VARIABLE_NAME = r"[a-z][a-z0-9-]*"
_TEXT_STYLE_WORDS = frozenset("none not bold dim italic underline underline2 reverse strike blink".split())


def is_color(value: str) -> bool:
    """#rgb, #rgba, #rrggbb, #rrggbbaa, rgb()/rgba(), or a CSS colour name."""
    text = value.strip()
    return bool(_HEX.fullmatch(text) or _RGB.fullmatch(text)) or text.lower() in CSS_COLOR_NAMES


@dataclass(frozen=True, slots=True)
class ThemeSpec:
    """A validated theme file; field names match `textual.theme.Theme`."""

    name: str
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    dark: bool = True
    luminosity_spread: float = 0.15
    text_alpha: float = 0.95
    variables: dict[str, str] = field(default_factory=dict)
    source: Path | None = None  # the file it came from; not a Theme argument

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `textual.theme.Theme`, leaving out unset colours."""
        kwargs: dict[str, Any] = {"name": self.name, "primary": self.primary}
        kwargs.update({name: getattr(self, name) for name in COLOR_FIELDS[1:] if getattr(self, name) is not None})
        kwargs.update(
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
        )
        return kwargs


@dataclass(frozen=True, slots=True)
class ThemeFileError:
    """One bad theme file, said in words."""

    path: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


def bundled_theme_dir() -> Path:
    """The shipped themes: `specdec_tui/themes` in a wheel, the repo's `themes/` when editable."""
    package_dir = Path(__file__).resolve().parent.parent
    installed = package_dir / "themes"
    if installed.is_dir():
        return installed
    return package_dir.parent.parent / "themes"


def user_theme_dir() -> Path:
    """Where a user drops their own theme files."""
    from specdec_tui.core.paths import config_dir

    return config_dir() / "themes"


def _line_of(text: str, key: str) -> int | None:
    pattern = re.compile(rf'^[ \t]*"?{re.escape(key)}"?[ \t]*=', re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _check_variable(name: str, value: Any) -> str | None:
    if not isinstance(name, str) or not re.fullmatch(_VARIABLE_NAME, name):
        return f'variables: "{name}" is not a variable name (lowercase words joined by -, e.g. "footer-key-foreground")'
    if not isinstance(value, str):
        return f'variables.{name}: expected a quoted string, got {value!r}'
    if name.endswith("-style"):
        words = value.split()
        if words and all(word in _TEXT_STYLE_WORDS for word in words):
            return None
        return f'variables.{name}: "{value}" is not a text style; use words like "bold", "italic", "reverse" or "none"'
    if is_color(value) or re.fullmatch(_VARIABLE_REF, value.strip()):
        return None
    return f'variables.{name}: "{value}" is not a colour; write "#rrggbb", "#rrggbbaa", "rgb(r, g, b)" or a CSS colour name'


def _validate(data: dict[str, Any]) -> tuple[str, str] | None:
    """(message, key) for the first problem in a parsed theme file, or None."""
    for key in data:
        if key not in ALL_FIELDS:
            return f'unknown field "{key}"; theme fields are: {", ".join(ALL_FIELDS)}', key
    if not isinstance(data.get("name"), str) or not data.get("name", "").strip():
        return 'missing name: write name = "my-theme"', "name"
    if "primary" not in data:
        return 'missing primary colour: write primary = "#4FC1B9"', "name"
    for key in COLOR_FIELDS:
        if key in data:
            value = data[key]
            if not isinstance(value, str) or not is_color(value):
                return (
                    f'{key}: {value!r} is not a colour; write "#rrggbb", "#rrggbbaa", "rgb(r, g, b)" or a CSS colour name',
                    key,
                )
    if "dark" in data and not isinstance(data["dark"], bool):
        return f"dark: expected true or false, got {data['dark']!r}", "dark"
    for key in ("luminosity_spread", "text_alpha"):
        value = data.get(key, 0.5)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            return f"{key}: expected a number from 0 to 1, got {value!r}", key
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        return "variables: expected a [variables] table of name = \"colour\"", "variables"
    for name, value in variables.items():
        problem = _check_variable(name, value)
        if problem:
            return problem, str(name)
    return None


# A theme is some thirty colours: a file far past that is not a theme (a FIFO or a device is no file at all).
THEME_MAX_BYTES = 1024 * 1024


def _load_one(path: Path) -> ThemeSpec | ThemeFileError:
    try:
        text = read_regular_text(path, max_bytes=THEME_MAX_BYTES)
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = re.search(r"line (\d+)", str(err))
        return ThemeFileError(path, f"TOML syntax error: {err}", int(match[1]) if match else None)
    except (OSError, UnicodeDecodeError) as err:
        return ThemeFileError(path, f"cannot read the file ({err})")
    problem = _validate(data)
    if problem:
        message, key = problem
        return ThemeFileError(path, message, _line_of(text, key))
    values = {key: data[key] for key in ALL_FIELDS if key in data}
    for key in ("luminosity_spread", "text_alpha"):
        if key in values:
            values[key] = float(values[key])
    return ThemeSpec(**values, source=path)


def load_theme_files(*dirs: Path | str) -> tuple[list[ThemeSpec], list[ThemeFileError]]:
    """Every `*.toml` in `dirs`, in order; a later directory's theme replaces an earlier one of
    the same name (so a user theme can override a bundled one). Missing directories are skipped."""
    specs: dict[str, ThemeSpec] = {}
    errors: list[ThemeFileError] = []
    for directory in dirs:
        directory = Path(directory)
        if not directory.is_dir():
            continue
        seen_here: dict[str, Path] = {}
        for path in sorted(directory.glob("*.toml")):
            loaded = _load_one(path)
            if isinstance(loaded, ThemeFileError):
                errors.append(loaded)
                continue
            if loaded.name in seen_here:
                taken_by = seen_here[loaded.name].name
                errors.append(ThemeFileError(path, f'theme name "{loaded.name}" is already used by {taken_by}; rename one'))
                continue
            seen_here[loaded.name] = path
            specs[loaded.name] = loaded
    return list(specs.values()), errors
