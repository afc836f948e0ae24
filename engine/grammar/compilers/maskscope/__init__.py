"""Maskscope's own JSON Schema -> GBNF compiler, with a report of what it enforces."""
