"""Session-wide fixtures: one real model for the whole suite, Qt offscreen.

Before any test module is imported (they load llama.cpp), the llama.cpp build is proven in a
child process. A build that crashes would kill pytest itself and swallow the report, so then
no test module is collected and the session ends with one failed check and its reason.
"""

from __future__ import annotations

import os
from pathlib import Path

# Before anything imports Qt: the suite runs without a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from engine.errors import MaskscopeError
from engine.llama_build.verdict import ensure_build_runs


def _build_problem() -> str | None:
    try:
        ensure_build_runs()
    except MaskscopeError as exc:
        return f"{exc.kind}: {exc}"
    return None


BUILD_PROBLEM = _build_problem()
_TESTS = Path(__file__).parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if BUILD_PROBLEM and collection_path != _TESTS else None


class _BuildCheck(pytest.Item):
    def runtest(self) -> None:
        pytest.fail(f"the llama.cpp build cannot run the tests: {BUILD_PROBLEM}", pytrace=False)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, "llama.cpp build check"


def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    if BUILD_PROBLEM:
        items[:] = [_BuildCheck.from_parent(session, name="llama.cpp build check")]


# The engine is imported inside the fixtures, not above: it loads llama.cpp, which the check
# above must have proven first.


@pytest.fixture(scope="session")
def model():
    """The real default model (Gemma 3 270M, Q4_K_M), loaded once."""
    from engine.model.llama import Model

    m = Model.load()
    yield m
    m.close()


def _example(name: str):
    from engine.examples import load_example
    from engine.grammar.compile import compile_schema

    ex = load_example(name)
    return ex, compile_schema(ex.schema_text)


@pytest.fixture(scope="session")
def currency():
    return _example("currency")


@pytest.fixture(scope="session")
def person():
    return _example("person")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The base URL of llama.cpp's own llama-server on the default model (tests/llama_server.py),
    started once for the session and stopped at its end; its log is in the session's tmp."""
    from tests.llama_server import served

    yield from served(tmp_path_factory.mktemp("llama-server") / "server.log")
