"""Command-line entry points: the TUI by default, headless subcommands for scripts."""
