"""specdec-tui: a terminal control panel for tuning SGLang speculative decoding."""

__version__ = "0.1.0"
