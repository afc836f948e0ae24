"""Suites: tested schemas for production - the suite file, its runs, and what they report."""
