"""`maskscope export`: the tested schema as a bundle for production (export.py), its
README and report, the grammar in each engine's syntax with its proof, the requests per
server, and the promptfoo config."""
