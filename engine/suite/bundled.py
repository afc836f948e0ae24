"""The example suites shipped in resources/suites (the Examples menu opens them)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from engine.suite.format import Suite
from engine.suite.load import load_suite

BUNDLED_SUITES = ("currency", "invoice")


def bundled_suite_path(name: str) -> Path:
    # resources/ is installed as plain files (pyproject's package-data), never zipped.
    return Path(str(files("resources.suites").joinpath(f"{name}.suite.json")))


def load_bundled_suite(name: str) -> Suite:
    return load_suite(str(bundled_suite_path(name)))
