"""Count the AMX instructions a compiled library holds (objdump from binutils)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

# Every AMX mnemonic: tile configuration, loads and stores, and the dot products.
_AMX = re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilezero|tilerelease|tdp\w+)\b")


def amx_instruction_count(library: Path) -> int:
    objdump = shutil.which("objdump")
    if objdump is None:
        raise FileNotFoundError("objdump (binutils) is needed to read the library's instructions")
    listing = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return len(_AMX.findall(listing))
