"""A saved run as a self-contained HTML report: opens in a browser with no network."""

from engine.report.page import render_report

__all__ = ["render_report"]
