"""A model file truncated, rewritten or deleted while it is loaded does not kill the process.

llama.cpp used to map the GGUF: truncating the file under a loaded model made the next
forward pass die with SIGBUS (measured: exit -7). The weights are now read into memory, so
the loaded model keeps working and only says the file is no longer the one it loaded. A
child process runs it, because the crash being guarded against would take pytest with it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.model.paths import default_model_path

CHILD = """
import os, sys
from engine.model.llama import Model
from engine.settings import ModelSettings

path = sys.argv[1]
model = Model.load(ModelSettings(path=path, n_ctx=64, n_threads=1))
tokens = model.tokenize("Hello")
model.eval_prompt(tokens)
before = model.logits().copy()
assert model.file_change() is None
os.truncate(path, 4096)
print("truncated:", model.file_change(), flush=True)
model.reset()
model.eval_prompt(tokens)  # with the file mapped, this died with SIGBUS
assert (model.logits() == before).all(), "the weights changed"
os.unlink(path)
print("deleted:", model.file_change(), flush=True)
model.eval_token(tokens[-1])
print("decoded after both", flush=True)
"""


@pytest.mark.slow
def test_a_model_file_truncated_then_deleted_under_a_loaded_model(tmp_path: Path) -> None:
    copy = tmp_path / "model.gguf"
    shutil.copyfile(default_model_path(), copy)
    root = Path(__file__).parents[2]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(copy)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    lines = child.stdout.splitlines()
    assert f"truncated: the model file changed since it was loaded: {copy}" in lines
    assert f"deleted: the model file was deleted since it was loaded: {copy}" in lines
    assert "decoded after both" in lines


def test_a_load_asked_to_stop_ends_with_load_cancelled() -> None:
    """What lets a window closing mid-load skip reading the weights (app/decoding/worker.py)."""
    from engine.model.llama import LoadCancelled, Model
    from engine.settings import ModelSettings

    with pytest.raises(LoadCancelled, match="was stopped"):
        Model.load(ModelSettings(n_ctx=64), lambda: True)
