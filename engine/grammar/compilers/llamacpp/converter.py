"""llama.cpp's JSON-Schema converter: the C++ one llama-server runs, or, where that is not
built, llama-cpp-python's Python port of it, with its faults worked around.

llama-server converts `json_schema` and `response_format` with common/json-schema-to-grammar.cpp.
`make setup` compiles that very code from the sdist llama-server is built from into a small
command (engine/llama_build/converter.py); this module runs it, one child process per schema
(about 2 ms). Its GBNF is the server's, character for character. Where it is not built (the
packaged app, a checkout before `make setup`), the compiler falls back to
`llama_cpp.llama_grammar`, an older port that differs (no integer bounds, other whitespace,
`{}` read as an object): `converter_in_use()` says which one runs, and the engines report,
the coverage report and the export bundle name it.
"""

from __future__ import annotations

import json
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import GrammarError
from engine.grammar.rewrite import fold_bounded_repeats
from engine.llama_build.converter import BUILD_COMMAND, cached_converter
from engine.schema.parse import keyword_values

_JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_STRICT_CHAR = 'char ::= [^"\\\\\\x00-\\x1F] |'
# Keywords that constrain nothing: a schema made only of them accepts any value.
_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "examples", "default"}
TIMEOUT_S = 60
_WARNING = "WARNING: JSON schema conversion was incomplete: "


@dataclass(frozen=True, slots=True)
class Converter:
    """Which converter the `llamacpp` compiler runs here."""

    native: bool  # llama.cpp's C++ converter, as llama-server runs it
    label: str
    binary: Path | None = None


def converter_in_use() -> Converter:
    binary = cached_converter()
    if binary is not None:
        return Converter(
            True, "llama.cpp's JSON-Schema converter (C++, as llama-server runs it)", binary
        )
    return Converter(
        False,
        "llama-cpp-python's Python port of llama.cpp's converter (llama-server's C++ one is "
        f"not built here: `{BUILD_COMMAND}`)",
    )


def schema_to_gbnf(schema: Any) -> str:
    """The grammar llama.cpp's converter makes of `schema`; GrammarError where it refuses it."""
    # `true` means "any JSON value", as `{}` does; the converter refuses a boolean schema.
    if schema is True:
        schema = {}
    _check_refs(schema)
    converter = converter_in_use()
    if converter.binary is not None:
        return native_gbnf(converter.binary, schema)
    return port_gbnf(schema)


def native_gbnf(binary: Path, schema: Any) -> str:
    """The C++ converter's GBNF, exactly as llama-server makes it from `json_schema`, save
    that Maskscope keeps `{}` any JSON value (llama-server narrows it to objects first)."""
    try:
        done = subprocess.run(
            [str(binary)], input=json.dumps(schema), capture_output=True, text=True,
            timeout=TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise GrammarError(
            f"llama.cpp's JSON-Schema converter did not finish in {TIMEOUT_S} s"
        ) from None
    except OSError as exc:
        raise GrammarError(
            f"llama.cpp's JSON-Schema converter could not start: {exc.strerror}"
        ) from None
    said = done.stderr.strip()
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        last = said.splitlines()[-1] if said else "no message"
        raise GrammarError(f"llama.cpp's JSON-Schema converter crashed ({name}): {last}")
    if done.returncode != 0:
        # "JSON schema conversion failed:\nJSON schema error at #/...: ..." in one line
        reason = " ".join(line for line in said.splitlines() if line) or f"exit {done.returncode}"
        reason = reason.removeprefix("JSON schema conversion failed: ")
        raise GrammarError(f"llama.cpp's JSON-Schema converter failed: {reason}")
    return done.stdout


def native_warnings(binary: Path, schema: Any) -> list[str]:
    """What the C++ converter warns of, one entry each ("pattern X is not supported (why),
    accepting any string"), as llama-server logs it."""
    done = subprocess.run(
        [str(binary)], input=json.dumps(schema), capture_output=True, text=True,
        timeout=TIMEOUT_S,
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.startswith(_WARNING)]
    return [w for line in lines for w in line.removeprefix(_WARNING).split("; ")]


def port_gbnf(schema: Any) -> str:
    """llama-cpp-python's port, with its crashes turned into GrammarError."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    # `{}` means "any JSON value"; the port would narrow it to objects.
    if isinstance(schema, dict) and not set(schema) - _ANNOTATIONS:
        schema = {**schema, "type": list(_JSON_TYPES)}
    try:
        gbnf = json_schema_to_gbnf(json.dumps(schema))
    except RecursionError:
        raise GrammarError(
            "the schema is too deeply nested or self-referencing to convert"
        ) from None
    except Exception as exc:  # the port fails with asserts and KeyErrors on what it lacks
        reason = str(exc) or type(exc).__name__
        raise GrammarError(f"llama.cpp's JSON-Schema converter failed: {reason}") from None
    # The port spells maxLength: n as optionals nested n deep, which llama.cpp's
    # recursive parser cannot read past a few thousand (65535 crashed it); `a{0,n}` is
    # the same language and parses flat.
    return fold_bounded_repeats(_strict_json_strings(gbnf))


def _check_refs(schema: Any) -> None:
    """Say what the converter would put badly: llama-cpp-python's port names a command-line
    flag Maskscope does not have for a remote $ref, and prints the whole schema for a target
    it cannot find."""
    for ref in keyword_values(schema, "$ref"):
        if not isinstance(ref, str):  # a property named "$ref"
            continue
        if not ref.startswith("#"):
            raise GrammarError(
                f"remote references are not supported: $ref {ref} points outside this "
                "schema, and Maskscope reads no other schema (no file, no network): copy "
                "what it names into $defs and refer to it as #/$defs/NAME"
            )
        target = schema
        for part in ref[2:].split("/") if ref.startswith("#/") else ():
            if not isinstance(target, dict) or part not in target:
                raise GrammarError(f"$ref {ref} points to nothing in this schema")
            target = target[part]


def _strict_json_strings(gbnf: str) -> str:
    """Keep raw control characters out of strings, as JSON requires.

    The port's `char` rule is `[^"\\]`, which lets a model write a raw newline inside a
    string: the grammar accepts it and json.loads then refuses the output. (The C++
    converter's rule already leaves them out.)
    """
    return gbnf.replace(_LOOSE_CHAR, _STRICT_CHAR)
