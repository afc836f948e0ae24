"""A suite of 200 samples in batches of 4 on the real model, cancelled a quarter of the way and
resumed (issue 13 §2), for `make soak`: no result lost, none decoded twice, memory and open
files flat. It prints the figures the docs/reliability.md quotes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.suite.cache import RunCache
from engine.suite.load import load_suite
from engine.suite.run import run_suite

pytestmark = pytest.mark.soak

CURRENCY = Path(__file__).resolve().parents[2] / "resources" / "suites" / "currency.suite.json"
SAMPLES = 40  # per case: the currency suite's 5 cases make 200
CANCEL_AT = 50


def _rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(next(x.split()[1] for x in status.splitlines() if x.startswith("VmRSS:"))) / 1024


def test_200_samples_cancelled_and_resumed_lose_nothing(model, tmp_path: Path) -> None:
    suite = load_suite(str(CURRENCY))
    cache = RunCache(tmp_path / "cache")
    # The first batch builds what stays for the process (llguidance's vocabulary trie, the
    # allocator's arenas for a batch context): measured flat from the second one on.
    run_suite(model, suite, samples=4, parallel=4)
    rss, fds = _rss_mb(), len(os.listdir("/proc/self/fd"))
    done: list[int] = []
    first = run_suite(
        model, suite, samples=SAMPLES, parallel=4, cache=cache,
        should_stop=lambda: len(done) >= CANCEL_AT, on_progress=lambda p: done.append(p.done),
    )  # fmt: skip
    assert first.cancelled and first.planned == 200
    finished = [s for s in first.samples if s.result.finish_reason.value != "cancelled"]
    again = run_suite(model, suite, samples=SAMPLES, parallel=4, cache=cache)
    assert not again.cancelled and len(again.samples) == 200
    assert again.cached == len(finished)  # each finished sample read back, none decoded twice
    resumed = {(s.case_id, s.index): s.result.text for s in again.samples}
    assert all(resumed[(s.case_id, s.index)] == s.result.text for s in finished)
    grown, fds_after = _rss_mb() - rss, len(os.listdir("/proc/self/fd"))
    valid = sum(s.valid for s in again.samples)
    print(
        f"\n200 samples (P = 4): cancelled after {len(finished)}, resumed with "
        f"{again.cached} from the cache; {valid} valid; RSS {rss:.0f} -> {rss + grown:.0f} MB, "
        f"open files {fds} -> {fds_after}; {again.wall_s:.0f} s to resume"
    )
    assert grown < 60 and fds_after <= fds + 2
