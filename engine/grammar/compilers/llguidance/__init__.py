"""llguidance's own JSON Schema compiler."""
