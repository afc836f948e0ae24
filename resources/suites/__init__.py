"""Example suites: tested schemas with cases, instances and thresholds (docs/suite-format.md)."""
