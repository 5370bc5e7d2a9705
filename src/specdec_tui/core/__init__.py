"""The UI-free core: unit files, flags, config, sessions, metrics, log parsing.

Nothing in this package imports Textual or does network IO; tests/test_layering.py enforces it.
"""
