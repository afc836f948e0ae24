"""The step chart and its text."""
