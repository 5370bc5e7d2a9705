"""Where the SGLang server runs: the `Host` interface, the local (demo) host and the SSH host."""
