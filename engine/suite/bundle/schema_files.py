"""A suite whose schema_file refers to other files: what the export records of them.

The suite's schema is already one document (load.py bundles it as it reads the suite); this
reads the files again to prove the bundle gives jsonschema's verdicts of the files on the
suite's instances, and says in the export which files went where."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.schema.nesting import read_limited
from engine.schema.siblings import Bundled, Proof, bundle_schema, same_verdicts
from engine.suite.bundle import snippets
from engine.suite.format import Suite

RECORD_FILE = "schema_files.json"


def suite_bundle(suite: Suite) -> Bundled | None:
    """The suite's schema files bundled; None for an inline schema or one of one file."""
    if suite.schema_file is None or suite.path is None:
        return None
    folder = Path(suite.path).parent
    path = folder / suite.schema_file
    bundled = bundle_schema(read_limited(path, "schema"), path, folder)
    return bundled if bundled.files else None


def proven(bundled: Bundled, instances: list[Any], what: str) -> Proof:
    """The proof on `instances`; a MaskscopeError naming the first that differs."""
    proof = same_verdicts(bundled, instances)
    if not proof.same:
        first = proof.differing[0]
        raise MaskscopeError(
            f"the bundled schema of {bundled.root_file} judges {what} {first + 1} otherwise "
            "than its files do: report this as a bug, and use the files themselves meanwhile"
        )
    return proof


def proof_line(bundled: Bundled, proof: Proof) -> str:
    """One line for the command line's stderr."""
    n = len(bundled.files)
    return (
        f"the bundled schema ({bundled.root_file} and {n} file{'s' * (n > 1)} it refers to) "
        f"gives jsonschema's verdicts of its files on all {proof.instances} instances"
    )


def record_files(suite: Suite) -> dict[str, str]:
    """{RECORD_FILE: its JSON} for a multi-file schema, proven on the suite's instances;
    nothing for a schema of one file."""
    bundled = suite_bundle(suite)
    if bundled is None:
        return {}
    data = [i.data for i in suite.instances if i.text is None]
    proof = proven(bundled, data, "instance")
    record = {
        "about": "schema.json is these files bundled into one document: each file under "
        f"{bundled.defs}, every $ref rewritten to a local pointer; jsonschema gives the same "
        "verdict on the suite's instances against the files and against schema.json",
        "root": bundled.root_file,
        "files": {f"#/{bundled.defs}/{k}": name for k, name in bundled.keys.items()},
        "proof": proof.to_json(),
    }
    return {RECORD_FILE: snippets.json_text(record)}
