"""A server started by a test on 127.0.0.1: a free port for it, whether it answers yet, and
the start-wait-stop loop each server starter (tests/llama_server.py,
tests/llama_cpp_python_server.py) fills in with its command."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import IO, NoReturn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    """True once GET `url` answers 200 (llama-server's /health gives 503 while it loads)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


class LoopbackServer:
    """One server process on 127.0.0.1; `url` is its base URL, `http://127.0.0.1:PORT`, and
    `start` again after a `stop` is a new one. A subclass says how to start it and when it
    is up; a server that exits or does not answer within `start_s` goes to `not_up` with the
    end of its log."""

    name = "the server"
    ready_path = "/"  # GET this answers 200 once the server can take requests
    start_s = 120.0
    poll_s = 0.25

    def __init__(self, log: Path) -> None:
        self.log, self.url = log, ""
        self.process: subprocess.Popen[bytes] | None = None

    def command(self, port: int) -> list[str]:
        raise NotImplementedError

    def spawn(self, command: list[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        """The process, its output in the log."""
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def not_up(self, message: str) -> NoReturn:
        raise RuntimeError(message)

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        command = self.command(port)
        with self.log.open("wb") as out:
            self.process = self.spawn(command, out)
        deadline = time.monotonic() + self.start_s
        while not answers(f"{self.url}{self.ready_path}"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = self.log.read_text(errors="replace")[-3000:]
                self.stop()
                self.not_up(f"{self.name} did not come up on {self.url}:\n{said}")
            time.sleep(self.poll_s)

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

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def __enter__(self) -> str:
        self.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()
