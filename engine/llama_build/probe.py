"""The check's child process: load llama.cpp and the model, run a few forward passes.

Run as `python -m engine.llama_build.probe MODEL`. It prints llama.cpp's compiled CPU
features first (flushed), so that the parent can name them even if a forward pass then kills
this process, and ends with one JSON line. A native crash here costs only this process.
"""

from __future__ import annotations

import json
import sys

# A prompt long enough for a batched forward pass (the matrix kernels, where AMX lives in
# ggml), then single-token passes (the vector kernels every generation step uses).
_PROMPT = "Check the build: " + " ".join(f"item {i}," for i in range(24))
_SINGLE_STEPS = 4


def main(argv: list[str]) -> int:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    print(json.dumps({"system_info": info}), flush=True)

    from engine.errors import MaskscopeError
    from engine.model.llama import Model
    from engine.settings import ModelSettings

    try:
        model = Model.load(ModelSettings(path=argv[0]))
        model.eval_prompt(model.tokenize(_PROMPT))
        for _ in range(_SINGLE_STEPS):
            model.eval_token(int(model.logits().argmax()))
        model.close()
    except MaskscopeError as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        return 2
    print(json.dumps({"ok": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
