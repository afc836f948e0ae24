"""The compilers: each turns a JSON Schema into its engine's grammar and a report of what
it does not enforce (engine/grammar/compile.py holds the one interface)."""
