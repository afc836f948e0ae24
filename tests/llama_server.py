"""llama.cpp's own `llama-server`, the binary `make llama-server` built from the llama.cpp that
Maskscope runs (engine/llama_build/server.py), started on 127.0.0.1 with the default model.

The binary must be there: `make test` builds it before pytest starts, so a missing one is a
broken setup, and the test that needs it fails naming the make target instead of skipping.
Used by the `llama_server` fixture (tests/conftest.py) and `make server-comparison`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from engine.llama_build.server import BUILD_COMMAND, installed_server
from engine.model.paths import default_model_path
from tests.loopback import LoopbackServer

START_S = 120
# Four slots share one KV cache (--kv-unified), so a long prompt is not cut to a quarter of
# it; two threads, as the machines the tests run on have two cores.
SERVER_ARGS = ("-c", "8192", "--parallel", "4", "--kv-unified", "--threads", "2",
               "--no-webui", "--cache-ram", "0")  # fmt: skip


class ServerNotUp(Exception):
    """llama-server is not built, or did not come up: the message says which, with its log."""


class LlamaServer(LoopbackServer):
    """One llama-server process; `url` is its base URL, `http://127.0.0.1:PORT`."""

    name = "llama-server"
    ready_path = "/health"
    start_s = START_S

    def start(self) -> None:
        binary = installed_server()
        if binary is None:
            raise ServerNotUp(
                f"llama-server is not built: run `{BUILD_COMMAND}` (make test does it first)"
            )
        self.binary = binary
        super().start()

    def command(self, port: int) -> list[str]:
        return [str(self.binary), "-m", str(default_model_path()), "--host", "127.0.0.1",
                "--port", str(port), *SERVER_ARGS]  # fmt: skip

    def not_up(self, message: str) -> NoReturn:
        raise ServerNotUp(message)


def served(log: Path) -> Iterator[str]:
    """A fixture's body: a llama-server's base URL while the fixture lasts, then stopped; one
    that does not come up fails the test with its log."""
    server = LlamaServer(log)
    try:
        server.start()
    except ServerNotUp as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server.url
    finally:
        server.stop()
