from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"


@pytest.fixture(scope="session")
def profile_vectors() -> dict[str, Any]:
    return json.loads((VECTORS / "profiles.json").read_text())
