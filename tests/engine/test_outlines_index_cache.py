"""outlines-core's Index, built for real over the default model's 262,144 tokens: kept on
disk and read back by the next caller without a build; a corrupt or cut-short file is built
again, never a crash; the oldest files go past the bounds; and a build nobody waits for any
more is killed at once, its child process gone."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

import pytest

import engine.masking.outlines as outlines
from engine.masking.outlines import index_for, vocabulary_for
from engine.masking.outlines_disk import IndexDisk, prune
from engine.model.llama import LoadCancelled


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> IndexDisk:
    """A cache folder of the test's own, and the in-memory cache left out of the way."""
    own = IndexDisk(tmp_path / "indexes")
    monkeypatch.setattr(outlines, "disk", own)
    monkeypatch.setattr(outlines, "_indexes", outlines.OrderedDict())
    return own


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The regexes whose Index a child process was started for (the real sandbox runs)."""
    started: list[str] = []
    real = outlines.run_isolated

    def counted(module, function, args, **kwargs):
        started.append(args[0])
        return real(module, function, args, **kwargs)

    monkeypatch.setattr(outlines, "run_isolated", counted)
    return started


def _fresh(length: int = 8) -> str:
    """A regex no cache has seen: a build must start."""
    return f'"{uuid.uuid4().hex}[a-z]{{0,{length}}}"'


def _allowed(index) -> list[int]:
    return sorted(index.get_allowed_tokens(index.get_initial_state()))


def test_a_built_index_is_read_back_from_disk_without_a_build(model, disk, builds):
    vocab = vocabulary_for(model)
    regex = _fresh()
    first = index_for(regex, vocab)
    assert builds == [regex]
    files = list(disk.folder.glob("*.index"))
    assert len(files) == 1 and files[0].stat().st_size > 10_000

    outlines._indexes.clear()  # as in the next process: only the disk has it
    second = index_for(regex, vocab)
    assert builds == [regex]  # no child started
    assert second is not first and _allowed(second) == _allowed(first)
    assert second.get_transitions() == first.get_transitions()


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty"])
def test_a_corrupt_cache_file_is_built_again(model, disk, builds, damage):
    vocab = vocabulary_for(model)
    regex = _fresh()
    built = index_for(regex, vocab)
    (path,) = disk.folder.glob("*.index")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    else:
        path.write_bytes(b"")

    outlines._indexes.clear()
    again = index_for(regex, vocab)
    assert builds == [regex, regex]  # built once more, not read
    assert _allowed(again) == _allowed(built)
    assert path.read_bytes() == data  # and the file is whole again


def test_the_oldest_files_go_past_the_bounds(tmp_path: Path):
    for number in range(5):
        path = tmp_path / f"{number}.index"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (1000 + number, 1000 + number))  # 0 the oldest
    (tmp_path / "old.partial").write_bytes(b"x")
    os.utime(tmp_path / "old.partial", (1000, 1000))  # a writer that died long ago
    prune(tmp_path, kept_files=4, kept_bytes=10_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{n}.index" for n in (1, 2, 3, 4)]
    prune(tmp_path, kept_files=4, kept_bytes=2_500)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["3.index", "4.index"]


def sandbox_children() -> set[int]:
    """This process's engine.sandbox children, read from /proc (Linux)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"engine.sandbox" in cmdline:
            found.add(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # dead, not yet reaped


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_child_is_killed_when_the_last_waiter_stops(model, disk):
    vocab = vocabulary_for(model)
    regex = _fresh(400)  # over 262,144 tokens: about 20 s of building on 2 cores
    before = sandbox_children()
    stops = [threading.Event(), threading.Event()]
    ends: list[BaseException | None] = [None, None]

    def wait(number: int) -> None:
        try:
            index_for(regex, vocab, should_stop=stops[number].is_set)
        except BaseException as exc:
            ends[number] = exc

    waiters = [threading.Thread(target=wait, args=(n,)) for n in (0, 1)]
    for thread in waiters:
        thread.start()
    deadline = time.monotonic() + 30
    while not (sandbox_children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = sandbox_children() - before  # one build for both waiters

    stops[0].set()
    waiters[0].join(5)
    assert isinstance(ends[0], LoadCancelled)
    time.sleep(0.5)
    assert not _gone(child)  # the other still waits: the build goes on

    stops[1].set()
    stopped = time.monotonic()
    waiters[1].join(5)
    assert isinstance(ends[1], LoadCancelled)
    while not _gone(child) and time.monotonic() - stopped < 2:
        time.sleep(0.02)
    assert _gone(child), "the child still builds with nobody waiting"
    assert str(ends[1]) == "the outlines index was not built: stopped"
    assert not list(disk.folder.glob("*.index"))  # nothing half-built was kept


def test_an_index_larger_than_the_bound_is_not_written(model, disk, builds, monkeypatch):
    # It would push out every other file and then be pruned itself.
    monkeypatch.setattr("engine.masking.outlines_disk.KEPT_BYTES", 1000)
    index_for(_fresh(), vocabulary_for(model))
    assert len(builds) == 1 and not disk.folder.exists()  # not even written and pruned
