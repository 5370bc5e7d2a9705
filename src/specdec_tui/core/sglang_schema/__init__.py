"""SGLang's own command line, release by release: the flag schema dumped from a release's parser, read here.

`schema` holds the schema records and the bundled releases, `arg_types` the argparse type functions a schema names,
`argv_parser` a real argparse parser built from a schema (how the validator and the simulator judge a command
line), `startup_checks` the checks a release's start-up hooks raise. `extract_snippet.py` is the script that
dumps a schema (run by tools/sglang_schema.py on a wheel, and on a host's Python over SSH).
"""
