"""One compile in a process of its own: `python -m engine.engines.compile_child COMPILER
[MEMORY_BYTES]`.

Reads the schema text on stdin and writes one JSON line: `{"compiles": true, "unenforced":
[[path, keyword, note], ...]}` or `{"compiles": false, "message": ...}`. engine/engines/
isolated.py starts it with a time and memory limit, so that an engine that runs out of
memory or crashes in native code (outlines-core on deeply nested arrays asks for gigabytes)
costs only this process.
"""

from __future__ import annotations

import json
import sys

from engine.errors import MaskscopeError
from engine.sandbox import limit_memory


def answer(text: str, compiler: str) -> dict:
    from engine.grammar.compile import compile_schema  # after the memory limit is set

    try:
        compiled = compile_schema(text, compiler)
    except MaskscopeError as exc:
        return {"compiles": False, "message": exc.message}
    except Exception as exc:  # the engine's own bug: said, not raised
        return {"compiles": False, "message": f"{type(exc).__name__}: {exc}"}
    gaps = [[u.path, u.keyword, u.note] for u in compiled.unenforced]
    return {"compiles": True, "unenforced": gaps}


def main() -> int:
    if len(sys.argv) > 2:
        limit_memory(int(sys.argv[2]))
    text = sys.stdin.read()
    sys.stdout.write(json.dumps(answer(text, sys.argv[1])) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
