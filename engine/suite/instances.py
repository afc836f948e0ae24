"""A suite's known-good and known-bad instances as `maskscope check` reads them."""

from __future__ import annotations

import json

from engine.check.inputs import FileInstance, SchemaCase
from engine.suite.format import Instance, Suite


def check_case(suite: Suite) -> SchemaCase:
    """The suite's schema with every one of its instances for engine/check. Check writes a
    JSON instance out from its data (in each compiler's key order); a raw text that is not
    JSON (an object cut off at max_tokens) is fed exactly as written, as a known-bad
    instance the grammar must refuse (the loader refuses one marked known-good)."""
    checked = tuple(_check_instance(instance) for instance in suite.instances)
    file = suite.path or f"{suite.name}.suite.json"
    return SchemaCase(file, None, suite.schema, checked)


def _check_instance(instance: Instance) -> FileInstance:
    if instance.text is None:
        return FileInstance(instance.data, instance.valid, instance.description)
    try:
        data = json.loads(instance.text)
    except (json.JSONDecodeError, RecursionError):
        return FileInstance(None, instance.valid, instance.description, text=instance.text)
    return FileInstance(data, instance.valid, instance.description)
