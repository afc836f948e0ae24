"""The OpenMP settings the engine makes before llama.cpp loads, unless the user made them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PRINT = (
    "import os, engine; print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('OMP_WAIT_POLICY'))"
)


def _settings_after_import(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    done = subprocess.run(
        [sys.executable, "-c", _PRINT], env=clean | env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_short_spin_that_a_second_calling_thread_does_not_shorten():
    assert _settings_after_import() == ["1000", "ACTIVE"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GOMP_SPINCOUNT": "50000"}, ["50000", "None"]),
        ({"OMP_WAIT_POLICY": "PASSIVE"}, ["1000", "PASSIVE"]),
    ],
)
def test_what_the_user_set_wins(env: dict[str, str], expected: list[str]):
    assert _settings_after_import(**env) == expected
