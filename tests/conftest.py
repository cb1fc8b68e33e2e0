from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Speed is measured in bench/, never asserted in tests: hypothesis' default 200 ms per-example deadline is a
# timed assertion that fails at random on a loaded 2-core CI machine.
settings.register_profile("wirespeed", deadline=None)
settings.load_profile("wirespeed")

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"


@pytest.fixture(scope="session")
def profile_vectors() -> dict[str, Any]:
    return json.loads((VECTORS / "profiles.json").read_text())
