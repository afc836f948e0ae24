"""Multi-file schemas: a `$ref` to a sibling file is bundled into one document, proven to
judge instances as the files do; one that leaves the folder, names a missing file or forms a
loop is one located error; a remote one is never fetched."""

from __future__ import annotations

import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.schema.parse import schema_validator
from engine.schema.siblings import ExternalRefError, bundle_schema, same_verdicts
from engine.workbench.locate import locate
from engine.workbench.problems import collect
from engine.workbench.siblings import ref_error_line, ref_problem
from tests.multi_file_schema import INSTANCES, LABELS, MAIN, write_instances, write_schema


def _bundle(main: Path, root: Path | None = None):
    return bundle_schema(main.read_text(encoding="utf-8"), main, root)


def test_the_files_become_one_document_that_judges_as_they_do(tmp_path):
    main = write_schema(tmp_path)
    bundled = _bundle(main)
    assert bundled.files == ("defs/address.json",)
    schema = json.loads(bundled.text)
    address = schema["$defs"]["defs_address.json"]
    assert schema["properties"]["home"] == {"$ref": "#/$defs/defs_address.json"}
    assert address["properties"]["street"] == {"$ref": "#/$defs/x"}  # the back-reference
    # Self-contained: a validator that can read no file judges every instance as labelled.
    validator = schema_validator(schema)
    assert [validator.is_valid(i) for i in INSTANCES] == LABELS
    proof = same_verdicts(bundled, INSTANCES)
    assert proof.same and proof.instances == len(INSTANCES)


def test_the_proof_can_fail(tmp_path):
    bundled = _bundle(write_schema(tmp_path))
    wrong = bundled.text.replace('"maxLength": 12', '"maxLength": 40')
    proof = same_verdicts(dataclasses.replace(bundled, text=wrong), INSTANCES)
    assert proof.differing == (1,)  # the long street: the files refuse it, the bundle not


def test_a_schema_of_one_file_comes_back_as_it_is(tmp_path):
    path = tmp_path / "one.json"
    text = '{"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}'
    assert bundle_schema(text, path).text == text


def _error(tmp_path: Path, main_text: str, files: dict[str, str]) -> ExternalRefError:
    folder = tmp_path / "team"
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    folder.mkdir(exist_ok=True)
    main = folder / "main.json"
    main.write_text(main_text, encoding="utf-8")
    with pytest.raises(ExternalRefError) as caught:
        _bundle(main)
    return caught.value


ESCAPE = '{\n  "properties": {\n    "a": {"$ref": "../outside.json"}\n  }\n}\n'
MISSING = '{\n  "properties": {\n    "a": {"$ref": "defs/nope.json#/x"}\n  }\n}\n'
LOOP = '{\n  "properties": {\n    "a": {"$ref": "b.json"}\n  }\n}\n'


def test_a_ref_leaving_the_folder_is_refused_where_it_is_written(tmp_path):
    error = _error(tmp_path, ESCAPE, {"outside.json": '{"type": "string"}'})
    assert "leaves the folder" in error.reason and not error.nested
    assert ref_error_line(error).startswith("main.json:3:11: the reference ../outside.json")


def test_a_missing_file_is_named(tmp_path):
    error = _error(tmp_path, MISSING, {})
    assert ref_error_line(error) == (
        "main.json:3:11: the reference defs/nope.json#/x names no file: "
        "defs/nope.json does not exist"
    )


def test_a_loop_across_files_is_found_in_the_file_that_closes_it(tmp_path):
    files = {
        "team/b.json": '{"allOf": [\n  {"$ref": "c.json"}]}',
        "team/c.json": '{"$ref": "b.json#"}',
    }
    error = _error(tmp_path, LOOP, files)
    assert error.nested and error.entry == ("properties", "a")
    assert ref_error_line(error) == (
        "b.json:2:4: the references form a loop that never reaches a schema "
        "(b.json → c.json → b.json)"
    )
    problem = ref_problem(error, locate(LOOP))  # in the window: at main.json's own $ref
    assert problem.message.endswith("(in b.json:2:4)") and (problem.line, problem.column) == (3, 11)


def test_a_file_that_refers_to_itself_through_a_property_is_no_loop(tmp_path):
    (tmp_path / "tree.json").write_text(
        '{"type": "object", "properties": {"kids": {"type": "array",'
        ' "items": {"$ref": "tree.json"}}}}'
    )
    main = tmp_path / "main.json"
    main.write_text('{"$ref": "tree.json"}')
    schema = json.loads(_bundle(main).text)
    kids = schema["$defs"]["tree.json"]["properties"]["kids"]
    assert kids["items"] == {"$ref": "#/$defs/tree.json"}


class _Counting(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_remote_ref_is_refused_and_never_fetched(tmp_path, capsys):
    # A real server on loopback that would answer: it must see no request at all.
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/x.json"
        path = tmp_path / "remote.json"
        path.write_text(json.dumps({"properties": {"a": {"$ref": url}}}, indent=2))
        assert main(["lint", str(path)]) == 2
        out = capsys.readouterr().out
        assert f"remote references are not supported: {url}" in out
        assert main(["check", str(path), "--instances", str(write_instances(tmp_path))]) == 1
    finally:
        server.shutdown()
    assert _Counting.hits == 0


@pytest.mark.parametrize(
    ("text", "files", "where", "reason"),
    [
        (ESCAPE, {"outside.json": "{}"}, (3, 11), "leaves the folder"),
        (MISSING, {}, (3, 11), "names no file"),
        (LOOP, {"team/b.json": '{"$ref": "c.json"}', "team/c.json": '{"$ref": "b.json"}'},
         (3, 11), "the references form a loop"),
    ],
)  # fmt: skip
def test_each_bad_ref_is_one_located_problem(tmp_path, capsys, text, files, where, reason):
    _error(tmp_path, text, files)  # writes the files
    main_file = tmp_path / "team" / "main.json"
    report = collect(text, "maskscope", "llamacpp", file=str(main_file))
    [problem] = report.problems
    assert (problem.severity, problem.kind) == ("error", "schema")
    assert (problem.line, problem.column) == where and reason in problem.message
    assert main(["lint", str(main_file)]) == 2
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"{main_file}:{where[0]}:{where[1]}: error: ")
    code = main(["check", str(main_file), "--instances", str(write_instances(tmp_path))])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and reason.split(": ")[-1] in err[0]


def test_lint_and_check_read_the_files(tmp_path, capsys):
    main_file = write_schema(tmp_path)
    assert main(["lint", "--json", str(main_file)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["problems"] == []
    assert all(out["engines"][e]["compiles"] for e in ("maskscope", "llamacpp", "vllm-guidance"))
    instances = write_instances(tmp_path)
    assert main(["check", str(main_file), "--instances", str(instances), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert (result["valid_ok"], result["valid_n"], result["invalid_rej"], result["invalid_n"]) == (
        1,
        1,
        4,
        4,
    )
    assert "verdicts of its files on all 5 instances" in captured.err


def test_a_problem_inside_another_file_points_at_the_ref_that_leads_there(tmp_path):
    main_file = write_schema(tmp_path)
    address = tmp_path / "defs" / "address.json"
    address.write_text(address.read_text().replace('"string", "pattern"', '"strin", "pattern"'))
    report = collect(MAIN, "maskscope", "llamacpp", file=str(main_file))
    [problem] = report.errors()
    assert problem.message.endswith(" (in defs/address.json, at $.properties.zip.type)")
    assert (problem.line, problem.column) == (5, 14)  # "home": {"$ref": ...}


def test_root_widens_the_folder_a_file_may_read(tmp_path):
    write_schema(tmp_path)
    address = tmp_path / "defs" / "address.json"
    text = address.read_text(encoding="utf-8")
    [refused] = collect(text, "maskscope", "llamacpp", file=str(address)).problems
    assert "../main.json#/$defs/x leaves the folder" in refused.message  # defs/ is the root
    assert main(["lint", str(address), "--root", str(tmp_path)]) == 0


def test_an_older_draft_bundles_under_definitions_and_a_file_id_is_dropped(tmp_path):
    (tmp_path / "my defs").mkdir()
    draft7 = "http://json-schema.org/draft-07/schema#"
    (tmp_path / "my defs" / "n.json").write_text(json.dumps({
        "$schema": draft7, "$id": "https://example.com/n.json",
        "definitions": {"n": {"type": "integer", "maximum": 5}},
    }))  # fmt: skip
    main_file = tmp_path / "main.json"
    main_file.write_text(json.dumps({
        "$schema": draft7, "properties": {"p": {"$ref": "my%20defs/n.json#/definitions/n"}},
    }))  # fmt: skip
    bundled = _bundle(main_file)
    schema = json.loads(bundled.text)
    assert schema["properties"]["p"] == {"$ref": "#/definitions/my_defs_n.json/definitions/n"}
    assert "$id" not in schema["definitions"]["my_defs_n.json"]
    instances = [{"p": 3}, {"p": 9}, {"p": "x"}]
    assert [schema_validator(schema).is_valid(i) for i in instances] == [True, False, False]
    assert same_verdicts(bundled, instances).same
