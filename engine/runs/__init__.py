"""Saved runs."""
