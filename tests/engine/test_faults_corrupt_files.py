"""Corrupt or foreign files given as a schema, a saved run, a suite or a GGUF: truncated, a
wrong version, binary, empty, not UTF-8, and UTF-8 with a byte-order mark. Each is one line
saying what is wrong (exit 2 on the command line), never a traceback; a BOM is no fault."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.errors import ModelLoadError
from engine.model.llama import Model
from engine.model.paths import default_model_path
from engine.settings import ModelSettings
from engine.suite.bundled import bundled_suite_path
from engine.suite.load import load_suite

RUN = Path(__file__).parents[1] / "data" / "runs" / "currency-v2.json"
SCHEMA = '{"type": "object", "properties": {"name": {"type": "string"}}}'
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe"
BOM = b"\xef\xbb\xbf"


def _latin1(text: str) -> bytes:
    return text.replace('"name"', '"nàme"', 1).encode("latin-1", errors="replace")


def _faults(text: str, new_version: bytes) -> dict[str, bytes]:
    data = text.encode("utf-8")
    return {
        "truncated": data[: len(data) // 2],
        "wrong version": new_version,
        "binary": BINARY,
        "empty": b"",
        "not UTF-8": _latin1(text),
    }


def _run_v99() -> bytes:
    data = json.loads(RUN.read_text(encoding="utf-8"))
    return json.dumps({**data, "version": 99}).encode()


def _suite_text() -> str:
    return bundled_suite_path("currency").read_text(encoding="utf-8")


def _suite_v99() -> bytes:
    return json.dumps({**json.loads(_suite_text()), "version": 99}).encode()


SCHEMA_FAULTS = {
    "truncated": ("lint", "error: JSON syntax error"),
    "wrong version": ("lint", "error: 5 is not one of ['array'"),
    "binary": ("stderr", "it is not UTF-8 text (byte 0x89 at offset 0)"),
    "empty": ("lint", "JSON syntax error: the schema is empty"),
    "not UTF-8": (
        "stderr",
        f"it is not UTF-8 text (byte 0xE0 at offset {SCHEMA.index('name') + 1})",
    ),
}


@pytest.mark.parametrize("fault", list(SCHEMA_FAULTS))
def test_a_schema_file(tmp_path, capsys, fault):
    # A schema's "version" is its $schema: one no validator knows.
    v99 = b'{"$schema": "https://json-schema.org/draft/2099/schema", "type": 5}'
    path = tmp_path / "schema.json"
    path.write_bytes(_faults(SCHEMA, v99)[fault])
    assert main(["lint", str(path)]) == 2
    out, err = capsys.readouterr()
    where, words = SCHEMA_FAULTS[fault]
    said = out if where == "lint" else err
    assert words in said and "Traceback" not in out + err, out + err
    if where == "stderr":
        assert err == f"maskscope: cannot read schema file {path}: {words}\n"


RUN_FAULTS = {
    "truncated": "{path}: not JSON (Unterminated string starting, line 854",
    "wrong version": "{path} is a version 99 run file; this Maskscope reads versions 1 and 2",
    "binary": "cannot read run file {path}: it is not UTF-8 text (byte 0x89 at offset 0)",
    "empty": "{path}: not JSON (Expecting value, line 1, column 1)",
    "not UTF-8": "cannot read run file {path}: it is not UTF-8 text (byte 0x",
}


@pytest.mark.parametrize("fault", list(RUN_FAULTS))
def test_a_saved_run(tmp_path, capsys, fault):
    text = RUN.read_text(encoding="utf-8").replace('"USD"', '"name"', 1)  # one é for latin-1
    path = tmp_path / "run.json"
    path.write_bytes(_faults(text, _run_v99())[fault])
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maskscope: " + RUN_FAULTS[fault].format(path=path)), err
    assert err.count("\n") == 1 and not (tmp_path / "r.html").exists()


SUITE_FAULTS = {
    "truncated": "line {line}, column",
    "wrong version": "$.version: version 99 is not one this Maskscope reads",
    "binary": "cannot read suite file {path}: it is not UTF-8 text (byte 0x89 at offset 0)",
    "empty": "line 1, column 1: not JSON (Expecting value)",
    "not UTF-8": "cannot read suite file {path}: it is not UTF-8 text (byte 0x",
}


@pytest.mark.parametrize("fault", list(SUITE_FAULTS))
def test_a_suite(tmp_path, capsys, fault):
    text = _suite_text().replace('"currency"', '"name"', 1)
    data = _faults(text, _suite_v99())[fault]
    path = tmp_path / "x.suite.json"
    path.write_bytes(data)
    assert main(["test", str(path)]) == 2  # refused before any model loads
    err = capsys.readouterr().err
    line = data.decode("latin-1").count("\n") + 1
    assert SUITE_FAULTS[fault].format(path=path, line=line) in err, err
    assert err.startswith("maskscope: suite: ") and err.count("\n") == 1


def test_a_bom_is_read_past_in_a_schema_a_run_and_a_suite(tmp_path, capsys):
    for name, text in [("s.json", SCHEMA), ("r.json", RUN.read_text(encoding="utf-8"))]:
        (tmp_path / name).write_bytes(BOM + text.encode("utf-8"))
    assert main(["lint", str(tmp_path / "s.json")]) in (0, 1)  # findings, not a failure
    assert main(["report", str(tmp_path / "r.json"), "--out", str(tmp_path / "r.html")]) == 0
    (tmp_path / "x.suite.json").write_bytes(BOM + _suite_text().encode("utf-8"))
    assert load_suite(str(tmp_path / "x.suite.json")).name == "currency"
    assert "BOM" not in capsys.readouterr().err


@pytest.fixture(scope="module")
def gguf_head() -> bytes:
    with default_model_path().open("rb") as f:
        return f.read(1 << 20)


GGUF_FAULTS = {
    "truncated": "failed to read",
    "wrong version": "this GGUF file is version 99 but this software only supports up to",
    "binary": "not a GGUF file (it starts with bytes 89 50 4E 47, not GGUF)",
    "empty": "model file is empty or truncated",
    "not UTF-8": "not a GGUF file (it starts with bytes E0 20 6C 61, not GGUF)",
    "BOM": "not a GGUF file (it starts with bytes EF BB BF 47, not GGUF)",
    "an HTML page": 'not a GGUF file (it starts with "<!DO", not GGUF)',
}


@pytest.mark.parametrize("fault", list(GGUF_FAULTS))
def test_a_gguf(tmp_path, gguf_head, fault):
    """The model loader, which the window, `generate` and `test` share (their own tests
    show its message: tests/app/test_window_errors.py, tests/app/test_gui_exit_codes.py)."""
    data = {
        "truncated": gguf_head[:4096],  # cut inside the metadata
        "wrong version": b"GGUF" + struct.pack("<I", 99) + gguf_head[8:4096],
        "binary": BINARY,
        "empty": b"",
        "not UTF-8": "à la carte".encode("latin-1"),
        "BOM": BOM + gguf_head[:4096],
        "an HTML page": b"<!DOCTYPE html><title>404</title>",
    }[fault]
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    with pytest.raises(ModelLoadError) as caught:
        Model.load(ModelSettings(path=str(path), n_ctx=64))
    assert GGUF_FAULTS[fault] in caught.value.message
    assert str(path) in caught.value.message and "\n" not in caught.value.message
