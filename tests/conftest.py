"""Session-wide fixtures: one real model for the whole suite, Qt offscreen."""

from __future__ import annotations

import os

# Before anything imports Qt: the suite runs without a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from engine.examples import load_example
from engine.grammar import compile_schema
from engine.model import Model


@pytest.fixture(scope="session")
def model() -> Model:
    """The real default model (Gemma 3 270M, Q4_K_M), loaded once."""
    m = Model.load()
    yield m
    m.close()


@pytest.fixture(scope="session")
def currency():
    ex = load_example("currency")
    return ex, compile_schema(ex.schema_text)


@pytest.fixture(scope="session")
def person():
    ex = load_example("person")
    return ex, compile_schema(ex.schema_text)
