"""A schema file as the commands read it: the files its `$ref`s name bundled in
(engine/schema/siblings.py), from its folder or the folder `--root` names."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from engine.errors import MaskscopeError
from engine.schema.nesting import check_depth, read_limited

if TYPE_CHECKING:
    from engine.schema.siblings import Bundled


def add_root_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--root",
        metavar="DIR",
        help="the folder a $ref to another file may read from (default: the schema file's "
        "folder); nothing outside it is read, and nothing from the network",
    )


def read_schema_file(path: str, root: str | None = None) -> str:
    """The schema's text, as one document: a bundle when it refers to other files."""
    return read_bundle(path, root).text


def read_bundle(path: str, root: str | None = None) -> Bundled:
    """The schema file with the files it refers to bundled in; a `$ref` that cannot be
    followed is one line: the file, line and column, and why."""
    from engine.schema.siblings import ExternalRefError, bundle_schema
    from engine.workbench.siblings import ref_error_line

    text = read_limited(path, "schema")
    check_depth(text, path)  # the message names the file; the bundler's would not
    try:
        return bundle_schema(text, path, root)
    except ExternalRefError as exc:
        raise MaskscopeError(ref_error_line(exc)) from None
