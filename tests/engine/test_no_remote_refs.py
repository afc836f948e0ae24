"""A remote `$ref` or `$schema` is never fetched: every path says so, and opens no socket.

jsonschema's default registry still downloads a `$ref` it cannot find in the document;
engine.schema.parse.schema_validator's registry holds only the meta-schemas. Each test
here fails if anything tries to connect anywhere while it reads such a schema.
"""

from __future__ import annotations

import json
import socket

import pytest

from engine.check.inputs import FileInstance, SchemaCase
from engine.check.run import check_case
from engine.errors import MaskscopeError
from engine.grammar.compile import compile_schema
from engine.schema.validate import validation_issues
from engine.workbench.problems import collect

REMOTE = "remote references are not supported"
# Each names a document outside itself: by URL, relative to its `$id`, relative to nothing.
REMOTE_REFS = [
    {"$ref": "https://example.com/x.json"},
    {
        "$id": "https://example.com/root.json",
        "type": "object",
        "properties": {"a": {"$ref": "other.json"}},
        "required": ["a"],
    },
    {"type": "object", "properties": {"a": {"$ref": "other.json#/$defs/b"}}, "required": ["a"]},
]
REMOTE_META = {"$schema": "https://example.com/my-meta-schema.json", "type": "string"}
COMPILERS = ["maskscope", "llamacpp", "llguidance"]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every attempt to connect is recorded and refused, as with no network at all."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("the test forbids network access")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts


def test_the_guard_catches_jsonschemas_own_fetch(offline) -> None:
    # Proof the fixture sees a fetch: jsonschema's default registry does try one.
    from jsonschema import Draft202012Validator

    with pytest.raises(Exception):  # noqa: B017 - only the attempt matters here
        list(Draft202012Validator(REMOTE_REFS[0]).iter_errors(1))
    assert offline


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("schema", REMOTE_REFS, ids=["url", "id-relative", "relative"])
def test_each_compiler_refuses_a_remote_ref_without_fetching(offline, compiler, schema) -> None:
    with pytest.raises(MaskscopeError, match=REMOTE):
        compile_schema(json.dumps(schema), compiler)
    assert offline == []


@pytest.mark.parametrize("schema", REMOTE_REFS, ids=["url", "id-relative", "relative"])
def test_validation_refuses_a_remote_ref_without_fetching(offline, schema) -> None:
    with pytest.raises(MaskscopeError, match=REMOTE):
        validation_issues({"a": 1}, schema)
    assert offline == []


def test_the_workbench_names_the_remote_ref_without_fetching(offline) -> None:
    text = json.dumps(REMOTE_REFS[1], indent=2)
    for compiler, backend in (("maskscope", "llguidance"), ("llamacpp", "llamacpp")):
        report = collect(text, compiler, backend)
        assert any(REMOTE in p.message for p in report.errors()), report.problems
    assert offline == []


def test_a_remote_meta_schema_is_not_fetched(offline) -> None:
    # `$schema` is only read for its draft; an unknown one is 2020-12, fetched never.
    assert validation_issues("x", REMOTE_META) == ()
    assert validation_issues(1, REMOTE_META)
    compile_schema(json.dumps(REMOTE_META), "maskscope")
    compile_schema(json.dumps(REMOTE_META), "llamacpp")
    with pytest.raises(MaskscopeError, match=REMOTE):  # llguidance looks it up, finds nothing
        compile_schema(json.dumps(REMOTE_META), "llguidance")
    collect(json.dumps(REMOTE_META), "maskscope", "llguidance")
    assert offline == []


@pytest.mark.parametrize("compiler", COMPILERS)
def test_check_reports_a_remote_ref_without_fetching(offline, model, compiler) -> None:
    # check_case is what each `maskscope check` worker runs; in-process so the guard holds.
    case = SchemaCase("remote.json", None, REMOTE_REFS[1], (FileInstance({"a": 1}, True),))
    result = check_case(model, case, compiler, "llguidance")
    assert not result.compiled
    assert REMOTE in (result.error or "")
    assert offline == []


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("#/$defs/missing", "the reference #/$defs/missing points nowhere in the schema"),
        ("#nope", "the reference #nope names no anchor in the schema"),
    ],
)
def test_a_local_ref_to_nothing_is_not_called_remote(offline, ref: str, message: str) -> None:
    with pytest.raises(MaskscopeError) as caught:
        validation_issues(1, {"$ref": ref})
    assert str(caught.value) == message
    assert offline == []
