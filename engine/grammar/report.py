"""What a compiler reports about a schema: the keywords its grammar does not enforce."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unenforced:
    """A keyword present in the schema that the generated grammar ignores."""

    path: str  # JSON path of the subschema, such as $.properties.age
    keyword: str
    note: str

    def __str__(self) -> str:
        return f"{self.path}: `{self.keyword}` is not enforced ({self.note})"
