"""`--server`'s fail-open check after the local model file was replaced or deleted.

The check reads each server output back through the tested grammar with the local model's
tokenizer. A model kept between runs whose file was replaced since is loaded again for the
run; one whose file is gone fails with the load's own one-line error before any request.
The local model is a copy of the real default one (tests/engine/test_faults_model_mmap.py);
the server is the tiny fake of tests/engine/test_suite_server_client.py, since what is
tested is the local side and a real server would cost a second model and its startup.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from engine.errors import ModelLoadError
from engine.model.llama import Model
from engine.model.paths import default_model_path
from engine.settings import ModelSettings
from engine.suite.load import suite_from_json
from engine.suite.server import run as server_run
from engine.suite.server.request import ServerOptions
from engine.suite.server.run import run_suite_on_server
from tests.engine.test_suite_server_client import SUITE, _send, fake_server

COMPLETION = {"choices": [{"text": '{"a": 1}', "finish_reason": "stop"}]}


def _answer(request, n: int) -> None:
    if request.command == "GET":
        _send(request, 200, {"data": [{"id": "fake-model"}]})
    else:
        _send(request, 200, COMPLETION)


def test_a_server_run_reads_with_the_model_file_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = tmp_path / "copy.gguf"
    shutil.copyfile(default_model_path(), gguf)
    stale = Model.load(ModelSettings(path=str(gguf), n_ctx=256, n_threads=1))
    checked_with: list[Model] = []

    class Recorded(server_run.GrammarCheck):
        def __init__(self, model: Model, compiled) -> None:
            checked_with.append(model)
            super().__init__(model, compiled)

    monkeypatch.setattr(server_run, "GrammarCheck", Recorded)
    suite = suite_from_json(SUITE, ".")
    try:
        shutil.copyfile(default_model_path(), tmp_path / "fresh.gguf")
        os.replace(tmp_path / "fresh.gguf", gguf)  # a new file at the same path
        with fake_server(_answer) as (url, _):
            made = run_suite_on_server(stale, suite, ServerOptions(url, logprobs=False))
        (sample,) = made.run.samples
        assert sample.result.valid and sample.server.grammar == "accepted"
        (fresh,) = checked_with
        assert fresh is not stale and fresh.path == gguf
        assert fresh._model is None  # the run closed the model it loaded for itself

        gguf.unlink()
        with fake_server(_answer) as (url, seen), pytest.raises(ModelLoadError) as failed:
            run_suite_on_server(stale, suite, ServerOptions(url, logprobs=False))
        assert str(failed.value) == f"model file not found: {gguf}"
        assert seen == []  # refused before any request
    finally:
        stale.close()
