"""Keywords by what they do to a value, shared by the compilers' coverage reports."""

from __future__ import annotations

# Keywords that describe rather than constrain (identifiers, metadata, content annotations,
# definitions): a grammar has nothing to enforce for them.
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "$defs",
        "definitions",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
    }
)
