"""The standalone app's program: `maskscope` as the console script runs it, plus `-m MODULE`.

Maskscope starts child processes as `sys.executable -m MODULE`: the window (app.main), the
llama.cpp build check (engine.llama_build.probe) and the grammar judge
(engine.grammar.judge.child). In the frozen app sys.executable is this program, so it takes
`-m` the way Python does; multiprocessing's spawned workers (`maskscope check`) come in
through freeze_support().
"""

from __future__ import annotations

import multiprocessing
import runpy
import sys


def main() -> int:
    multiprocessing.freeze_support()  # a spawned worker runs here and exits
    if len(sys.argv) >= 3 and sys.argv[1] == "-m":
        module = sys.argv[2]
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    from engine.cli.main import main as maskscope

    return maskscope()


if __name__ == "__main__":
    sys.exit(main())
