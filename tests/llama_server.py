"""llama.cpp's own `llama-server`, the binary `make llama-server` built from the llama.cpp that
Maskscope runs (engine/llama_build/server.py), started on 127.0.0.1 with the default model.

The binary must be there: `make test` builds it before pytest starts, so a missing one is a
broken setup, and the test that needs it fails naming the make target instead of skipping.
Used by the `llama_server` fixture (tests/conftest.py) and `make server-comparison`.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from engine.llama_build.server import BUILD_COMMAND, installed_server
from engine.model.paths import default_model_path
from tests.loopback import answers, free_port

START_S = 120
# Four slots share one KV cache (--kv-unified), so a long prompt is not cut to a quarter of
# it; two threads, as the machines the tests run on have two cores.
SERVER_ARGS = ("-c", "8192", "--parallel", "4", "--kv-unified", "--threads", "2",
               "--no-webui", "--cache-ram", "0")  # fmt: skip


class ServerNotUp(Exception):
    """llama-server is not built, or did not come up: the message says which, with its log."""


class LlamaServer:
    """One llama-server process; `url` is its base URL, `http://127.0.0.1:PORT`."""

    def __init__(self, log: Path) -> None:
        self.log, self.url = log, ""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = installed_server()
        if binary is None:
            raise ServerNotUp(
                f"llama-server is not built: run `{BUILD_COMMAND}` (make test does it first)"
            )
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        command = [str(binary), "-m", str(default_model_path()), "--host", "127.0.0.1",
                   "--port", str(port), *SERVER_ARGS]  # fmt: skip
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_S
        while not answers(f"{self.url}/health"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = self.log.read_text(errors="replace")[-3000:]
                self.stop()
                raise ServerNotUp(f"llama-server did not come up on {self.url}:\n{said}")
            time.sleep(0.25)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> str:
        self.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()
