"""Sizes llama.cpp asserts on (and so aborts the process on) are checked before it sees them.

llama.cpp cuts the batch to the context it was asked for (--n-ctx 64: a batch of 64), then
pads the context itself up to 256; a prompt that fits the padded context but not the batch
used to reach GGML_ASSERT(n_tokens_all <= cparams.n_batch) and exit 134.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import PromptError
from engine.model.llama import Model
from engine.records import FinishReason
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings, ModelSettings

ROOT = Path(__file__).resolve().parents[2]
CURRENCY = ROOT / "resources" / "examples" / "currency.schema.json"
LONG_PROMPT = "The invoice lists many items. " * 25 + "JSON:"  # about 150 tokens


@pytest.fixture(scope="module")
def small_context() -> Model:
    m = Model.load(ModelSettings(n_ctx=64))
    yield m
    m.close()


@pytest.mark.slow
def test_cli_prompt_longer_than_the_context_exits_2(tmp_path: Path):
    # A child process: before the fix this aborted, and would have taken pytest with it.
    args = ["--schema", str(CURRENCY), "--prompt", LONG_PROMPT, "--n-ctx", "64"]
    proc = subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "generate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = proc.stderr.strip().splitlines()
    assert err[-1].startswith("maskscope: prompt: the prompt has "), err
    assert "holds 64" in err[-1] and "--n-ctx" in err[-1]
    assert "GGML_ASSERT" not in proc.stderr


@pytest.mark.slow
def test_batch_is_never_larger_than_the_context_asked_for(small_context: Model):
    assert small_context.n_ctx == 64
    assert small_context.n_batch <= small_context.n_ctx


@pytest.mark.slow
def test_prompt_longer_than_the_context_raises_before_llama_cpp(small_context: Model, currency):
    _, compiled = currency
    assert len(small_context.tokenize(LONG_PROMPT)) > small_context.n_ctx
    with pytest.raises(PromptError, match="holds 64"):
        run_to_end(small_context, compiled, LONG_PROMPT, GenerationSettings(max_tokens=4))


@pytest.mark.slow
def test_small_context_still_runs_a_prompt_that_fits(small_context: Model, currency):
    _, compiled = currency
    settings = GenerationSettings(max_tokens=4, temperature=0.0)
    result = run_to_end(small_context, compiled, "Currency: EUR\nJSON:", settings)
    assert result.n_tokens == 4


@pytest.mark.slow
def test_prompt_longer_than_a_batch_runs_in_batches(model: Model, currency):
    _, compiled = currency
    prompt = "Amount due in euros. " * 130 + "JSON:"  # more tokens than one batch of 512
    assert len(model.tokenize(prompt)) > model.n_batch
    result = run_to_end(model, compiled, prompt, GenerationSettings(max_tokens=12))
    assert result.n_tokens > 0 and result.finish_reason is not FinishReason.ERROR, result.message
