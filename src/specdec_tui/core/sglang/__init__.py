"""SGLang's log lines: records (what a line says), parse (text to record), stats (records folded)."""
