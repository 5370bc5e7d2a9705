"""Screens of the panel: the main screen and its modals (help, confirm, error)."""
