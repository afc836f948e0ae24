"""llama-cpp-python's own server (`python -m llama_cpp.server`, its [server] extra), started on
127.0.0.1 with the default model, for the tests that run against it."""

from __future__ import annotations

import subprocess
import sys
from typing import IO, NoReturn

import pytest

from engine.model.paths import default_model_path
from tests.loopback import LoopbackServer


class LlamaCppPythonServer(LoopbackServer):
    """llama_cpp.server on the default model; `start` again after a `stop` is a new one."""

    name = "llama_cpp.server"
    ready_path = "/v1/models"
    start_s = 180.0
    poll_s = 0.5

    def command(self, port: int) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        ]  # fmt: skip

    def spawn(self, command: list[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        """Its stderr only: stdout is uvicorn's request lines."""
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)

    def not_up(self, message: str) -> NoReturn:
        pytest.fail(message)
