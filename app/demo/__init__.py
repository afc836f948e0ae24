"""Demonstration mode: explaining, branching and comparing a run for an audience."""
