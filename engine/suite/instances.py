"""A suite's known-good and known-bad instances as `maskscope check` reads them."""

from __future__ import annotations

import json

from engine.check.inputs import Case as CheckCase
from engine.check.inputs import Instance as CheckInstance
from engine.suite.format import Instance, Suite


def check_case(suite: Suite) -> tuple[CheckCase, tuple[Instance, ...]]:
    """The suite's schema with its instances for engine/check, and the raw-text instances
    that are not JSON: check writes each instance out from its data (in each compiler's key
    order), so text that does not parse cannot go through it and is fed on its own."""
    checked: list[CheckInstance] = []
    unparsed: list[Instance] = []
    for instance in suite.instances:
        if instance.text is None:
            checked.append(CheckInstance(instance.data, instance.valid, instance.description))
            continue
        try:
            data = json.loads(instance.text)
        except json.JSONDecodeError:
            unparsed.append(instance)
            continue
        checked.append(CheckInstance(data, instance.valid, instance.description))
    file = suite.path or f"{suite.name}.suite.json"
    return CheckCase(file, None, suite.schema, tuple(checked)), tuple(unparsed)
