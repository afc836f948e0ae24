"""llama-cpp-python's own server (`python -m llama_cpp.server`, its [server] extra), started on
127.0.0.1 with the default model, for the tests that run against it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.model.paths import default_model_path
from tests.loopback import answers, free_port

_START_S = 180


class LlamaCppPythonServer:
    """llama_cpp.server on the default model; `start` again after a `stop` is a new one."""

    def __init__(self, log: Path) -> None:
        self.log, self.url, self.process = log, "", None

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        ]  # fmt: skip
        with self.log.open("wb") as err:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + _START_S
        while not answers(f"{self.url}/v1/models"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = self.log.read_text(errors="replace")[-3000:]
                self.stop()
                pytest.fail(f"llama_cpp.server did not come up on {self.url}:\n{said}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None
