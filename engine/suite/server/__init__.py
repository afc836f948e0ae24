"""`maskscope test --server URL`: the suite's cases sent to an OpenAI-compatible server
(request.py: what each mode sends; client.py: HTTP; run.py: the run; report.py, note.py)."""
