"""Headless `sim` commands (not built yet)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `sim` command group."""
