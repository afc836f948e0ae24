"""`maskscope check` gives the same verdicts whatever the model's tokenizer family.

Each family's tokenizer comes from a vocabulary file in llama-cpp-python's sdist, inside a
tiny random-weight model (tests/tiny_models.py): SentencePiece with a space prefix (Llama 2's,
and Phi-3's, whose file has no add_space_prefix key, so llama.cpp turns it on), byte-level BPE
(Llama 3, Qwen2). Their verdicts must be Gemma's on the same files: a grammar accepts a text
by its bytes, whichever tokens spell them. Before continuation tokens (engine/model/
continuation.py) Phi-3 and Llama 2 rejected every valid instance at character 0, token ' {"'.
The vocabulary-only files themselves work too: a user checks against a production model's
tokenizer without its weights.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.model.continuation import continuation_tokens
from engine.settings import ModelSettings
from tests.tiny_models import tiny_model, vocab_file

SAMPLE = sorted(str(p) for p in (Path(__file__).parents[1] / "data" / "maskbench").glob("*.json"))
FAMILIES = ["phi-3", "llama-spm", "llama-bpe", "qwen2"]


def _verdicts(model: Path | None) -> dict[str, tuple]:
    args = [sys.executable, "-m", "engine.cli.main", "check", "--json", *SAMPLE]
    if model is not None:
        args += ["--model", str(model)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return {r["file"]: (r["compiled"], r["valid_ok"], r["invalid_rej"]) for r in rows}


@pytest.fixture(scope="module")
def gemma_verdicts() -> dict[str, tuple]:
    verdicts = _verdicts(None)
    assert len(verdicts) == len(SAMPLE)
    return verdicts


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_checks_as_gemma_does(family, gemma_verdicts):
    assert _verdicts(tiny_model(family)) == gemma_verdicts


@pytest.mark.slow
@pytest.mark.parametrize("family", ["phi-3", "qwen2"])
def test_a_vocabulary_only_file_checks_as_gemma_does(family, gemma_verdicts):
    assert _verdicts(vocab_file(family)) == gemma_verdicts


@pytest.mark.parametrize("family", FAMILIES)
def test_continuation_tokens_spell_the_text_and_nothing_before_it(family):
    from engine.model.llama import Model

    model = Model.load(ModelSettings(path=str(vocab_file(family)), n_ctx=64))
    try:
        for text in ['{"a": 1}', "x", "\u0928\u092e\u0938\u094d\u0924\u0947 {}", " lead"]:
            spelled = b"".join(model.piece(t) for t in continuation_tokens(model, text))
            assert spelled == text.encode()
    finally:
        model.close()


def test_a_vocabulary_only_file_refuses_to_generate_in_one_line(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    args = [sys.executable, "-m", "engine.cli.main", "generate", "--schema", str(schema),
            "--prompt", "n?", "--model", str(vocab_file("qwen2"))]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "holds only a vocabulary" in done.stderr
