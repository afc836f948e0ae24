"""A suite reads only inside its own folder and makes nothing be written anywhere else.

The rule (engine/suite/load.py, read_inside): `schema_file` and `cases_file` are paths
relative to the suite's folder, and once resolved (`..`, `~`, symlinks followed) must stay
inside it; an absolute path is allowed only where it points inside it. Nothing in a suite
names a path that is written: a bundle goes where the user chose (--out, or a folder the
window asks for) and its file names are fixed; the suite's name, which the window uses for
a folder inside a chosen one, becomes a single safe path part. test_suite_format.py covers
`../`, absolute paths, `sub/../../` and symlinks that leave the folder; this file the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import SuiteError
from engine.suite.bundle.export import bundle_folder_name, write_bundle
from engine.suite.load import load_suite
from tests.engine.test_hostile_text import made_tested

HOSTILE_NAMES = ["../../x", "..", ".", "a/b", "/abs", "a\\b", "a\x00b", "", "C:x", " ../ "]


def _suite_file(folder: Path, **paths: str) -> Path:
    data = {
        "format": "maskscope-suite",
        "version": 1,
        "prompt": "hi",
        **({} if "schema_file" in paths else {"schema": {"type": "object"}}),
        **({} if "cases_file" in paths else {"cases": [{"id": "a", "vars": {}}]}),
        **paths,
    }
    path = folder / "s.suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("key", ["schema_file", "cases_file"])
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("x\x00.json", "path holds a NUL character"),  # was a ValueError from the OS
        ("~/x.json", "must stay inside the suite's folder"),
        ("..", "must stay inside the suite's folder"),
        ("/etc/passwd", "must stay inside the suite's folder"),
        ("sub/../../../etc/passwd", "must stay inside the suite's folder"),
    ],
)
def test_a_suite_cannot_read_outside_its_folder(tmp_path: Path, key: str, name: str, why) -> None:
    folder = tmp_path / "suite"
    (folder / "sub").mkdir(parents=True)
    with pytest.raises(SuiteError) as caught:
        load_suite(str(_suite_file(folder, **{key: name})))
    assert f"$.{key}: " in str(caught.value) and why in str(caught.value)


def test_a_suite_in_a_subfolder_reads_its_own_files(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "schema.json").write_text('{"type": "integer"}', encoding="utf-8")
    (folder / "data" / "cases.jsonl").write_text('{"vars": {}}\n', encoding="utf-8")
    paths = {"schema_file": "data/../data/schema.json", "cases_file": "./data/cases.jsonl"}
    suite = load_suite(str(_suite_file(folder, **paths)))
    assert suite.schema == {"type": "integer"} and len(suite.cases) == 1


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_suites_name_is_one_folder_inside_the_chosen_one(tmp_path: Path, name: str) -> None:
    folder = bundle_folder_name(name)
    assert folder.endswith("-bundle") and folder not in (".", "..")
    assert not any(c in folder for c in "/\\\x00:")
    assert (tmp_path / folder).resolve().parent == tmp_path.resolve()


def test_an_ordinary_name_keeps_its_words() -> None:
    assert bundle_folder_name("currency") == "currency-bundle"
    assert bundle_folder_name("Rechnung Ä-1.2") == "Rechnung Ä-1.2-bundle"


def _everything(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("name", ["../../escaped", "a/../../b", "..", "x\x00y"])
def test_a_bundle_writes_only_into_its_folder_whatever_the_suite_is_named(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "chosen" / "out"
    out.parent.mkdir()
    before = _everything(tmp_path)
    hashes = write_bundle(out, made_tested(name))
    made = _everything(tmp_path) - before
    assert made and all(p == out or p.is_relative_to(out) for p in made), made
    assert {p.relative_to(out).as_posix() for p in made if p.is_file()} == set(hashes)
