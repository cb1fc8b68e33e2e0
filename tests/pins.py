"""Where the Python requirements of the repository are declared, read back for the tests that hold them together.

pyproject.toml's `pulumi` extra is the one place the Pulumi SDK pins live; requirements.txt (the root project) and
each example's requirements.txt install that extra instead of repeating them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from conftest import ROOT

PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION: str = PYPROJECT["project"]["version"]
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]


def requirement_lines(path: Path) -> list[str]:
    """A requirements file's requirements: every line that is neither blank nor a comment, stripped."""
    lines = (line.split(" #")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def exact_pins(requirements: list[str]) -> dict[str, str]:
    """Name -> version of every `name==version` requirement."""
    found = (re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", r) for r in requirements)
    return {m[1].lower(): m[2] for m in found if m}
