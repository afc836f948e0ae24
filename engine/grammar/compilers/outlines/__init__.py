"""outlines-core's JSON Schema to regex compiler."""
