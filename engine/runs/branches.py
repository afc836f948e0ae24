"""What-if branches: the original run and the runs forked from it, in the order made.

A branch is a run that followed the original up to one step, took the token the user
forced there, and was resampled under the grammar after it. Its SavedRun holds every step
from the first, the shared ones included, so that it compares with the original like any
two runs (engine.runs.compare). Steps are counted from 0 here; names count from 1, as
every view shows them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from engine.errors import MaskscopeError
from engine.runs.compare import RunComparison, compare_runs
from engine.runs.saved import SavedRun


@dataclass(frozen=True, slots=True)
class Branch:
    name: str  # "Branch 2: step 7 → 'EUR'"
    fork_step: int  # the step whose token was forced, from 0
    token_text: str  # the forced token's display form (␣, \n)
    token_id: int
    run: SavedRun


def branch_name(number: int, fork_step: int, token_text: str) -> str:
    return f"Branch {number}: step {fork_step + 1} → {token_text!r}"


class BranchSet:
    """The original run and its branches; each branch's comparison with the original is
    computed once, when first asked for."""

    def __init__(self, original: SavedRun | None = None) -> None:
        self.original = original
        self._branches: list[Branch] = []
        self._comparisons: dict[int, RunComparison] = {}  # by position in _branches

    def set_original(self, run: SavedRun) -> None:
        """A new original: the branches of the old one no longer belong to it."""
        self.original = run
        self.clear_branches()

    def clear(self) -> None:
        self.original = None
        self.clear_branches()

    def clear_branches(self) -> None:
        self._branches.clear()
        self._comparisons.clear()

    def new_branch(self, fork_step: int, token_id: int, token_text: str, run: SavedRun) -> Branch:
        """A branch named with the next number; add() keeps it."""
        name = branch_name(len(self._branches) + 1, fork_step, token_text)
        return Branch(name, fork_step, token_text, token_id, run)

    def add(self, branch: Branch) -> int:
        """Keep a branch; returns its position among the branches."""
        self._branches.append(branch)
        return len(self._branches) - 1

    @property
    def branches(self) -> tuple[Branch, ...]:
        return tuple(self._branches)

    def __len__(self) -> int:
        return len(self._branches)

    def __iter__(self) -> Iterator[Branch]:
        return iter(tuple(self._branches))

    def compare(self, index: int) -> RunComparison:
        """Branch `index` against the original: the original is the "before" side."""
        if self.original is None:
            raise MaskscopeError("there is no original run to compare the branch with")
        if index not in self._comparisons:
            self._comparisons[index] = compare_runs(self.original, self._branches[index].run)
        return self._comparisons[index]
