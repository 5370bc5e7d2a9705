"""The local host: a systemd-like supervisor for units on this machine (the demo host runs here)."""
