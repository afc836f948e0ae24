"""Issue 22: a binary or a huge file given to any command is bad input: exit 2 and one line on
stderr naming the file, never a traceback. Each command runs as a user runs it, the real CLI in
a child process. The huge file is sparse: refused by its size, it is never read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.schema.nesting import MAX_FILE_BYTES
from engine.suite.server.request import read_answer

ROOT = Path(__file__).resolve().parents[2]
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"

COMMANDS = {
    "lint": lambda f: ["lint", f],
    "check": lambda f: ["check", f],
    "generate": lambda f: ["generate", "--schema", f],
    "test": lambda f: ["test", f],
    "test --compare": lambda f: ["test", "--compare", f, f],
    "report": lambda f: ["report", f],
}
NAMES = {"test": "s.suite.json", "test --compare": "result.json", "report": "run.json"}


def _file(tmp_path: Path, command: str, kind: str) -> Path:
    path = tmp_path / NAMES.get(command, "schema.json")
    if kind == "binary":
        path.write_bytes(BINARY)
    else:
        with path.open("wb") as f:
            f.truncate(MAX_FILE_BYTES + 1)
    return path


@pytest.mark.parametrize("kind", ["binary", "huge"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_file_is_one_line_and_exit_2(tmp_path, command, kind):
    path = _file(tmp_path, command, kind)
    args = [sys.executable, "-m", "engine.cli.main", *COMMANDS[command](str(path))]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert str(path) in lines[0], lines[0]
    why = "not UTF-8" if kind == "binary" else f"more than the {MAX_FILE_BYTES >> 20} MiB"
    assert why in lines[0], lines[0]


def test_a_logprob_no_float_holds_is_left_out():
    logprobs = {"tokens": ["{", "}"], "token_logprobs": [10**400, -1.0]}
    data = {"choices": [{"text": "{}", "logprobs": logprobs}]}
    answer = read_answer("grammar", data)
    assert answer.tokens == ("}",) and answer.logprobs == (-1.0,)
