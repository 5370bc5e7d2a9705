"""Shipped prompt sets (`realistic`, `repetitive`) and user prompt files, loaded into one shape.

A user file is JSON (a list of strings, a list of {"prompt": ...} objects, or {"prompts": [...]}) or
plain text with one prompt per non-empty line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

SHIPPED = ("realistic", "repetitive")


class PromptSetError(Exception):
    """A prompt set that cannot be loaded, in words."""


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    kind: str = "prompt"


@dataclass(frozen=True, slots=True)
class PromptSet:
    name: str
    prompts: tuple[Prompt, ...]
    repetitive: bool = False  # by design: acceptance on it is inflated


def load_prompt_set(name_or_path: str) -> PromptSet:
    """A shipped set by name, or a file by path."""
    if name_or_path in SHIPPED:
        raw = resources.files(__package__).joinpath(f"{name_or_path}.json").read_text(encoding="utf-8")
        return PromptSet(name_or_path, _parse_json(json.loads(raw), name_or_path), name_or_path == "repetitive")
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise PromptSetError(
            f"prompt set {name_or_path!r} is neither {' nor '.join(SHIPPED)} nor a readable file"
        )
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            prompts = _parse_json(json.loads(text), str(path))
        except json.JSONDecodeError as err:
            raise PromptSetError(f"{path}: not valid JSON (line {err.lineno}): {err.msg}") from None
    else:
        prompts = tuple(Prompt(line.strip()) for line in text.splitlines() if line.strip())
    if not prompts:
        raise PromptSetError(f"{path}: holds no prompts")
    return PromptSet(path.stem, prompts)


def _parse_json(data: Any, where: str) -> tuple[Prompt, ...]:
    items = data.get("prompts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise PromptSetError(f"{where}: expected a list of prompts")
    out: list[Prompt] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            out.append(Prompt(item))
        elif isinstance(item, dict) and isinstance(item.get("prompt"), str):
            out.append(Prompt(item["prompt"], str(item.get("kind", "prompt"))))
        else:
            raise PromptSetError(f"{where}: each prompt must be a string or an object with 'prompt'")
    return tuple(out)
