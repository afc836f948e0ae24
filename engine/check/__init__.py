"""`maskscope check`: known instances fed through a grammar, judged beside jsonschema."""
