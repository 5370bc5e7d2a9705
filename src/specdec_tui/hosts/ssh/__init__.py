"""The SSH host: a real systemd unit on a remote machine, over asyncssh."""
