"""What every subcommand shares: exit codes."""

from __future__ import annotations

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_BROKEN_BUILD = 0, 1, 2, 3
