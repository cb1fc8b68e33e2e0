"""Grafana's published dashboard schema, installed from the npm registry for tests/manifests/test_dashboard.py.

`@grafana/schema` is Grafana's own package of the types it generates from its dashboard kind (the `Dashboard`,
`Panel` and `VariableModel` the Grafana frontend loads boards into): dist/types/raw/dashboard/x/types.gen.d.ts, the
classic (schemaVersion 4x) JSON model this project renders. It ships no JSON Schema file, so the check is
TypeScript's: the rendered board as an object literal typed `Dashboard`, compiled by `tsc --strict --noEmit`.
tests/grafana-schema/package.json pins @grafana/schema 13.2.3 and typescript 5.9.3; package-lock.json pins their
integrity hashes. `npm ci` installs them into tests/grafana-schema/node_modules (git-ignored) the first time, and
again whenever the lock file changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parent / "grafana-schema"
# The module the Dashboard type lives in (package's "exports" maps no subpath to it, so it is named by file).
SCHEMA_TYPES = "@grafana/schema/dist/types/raw/dashboard/x/types.gen"
_STAMP = ".lock-sha256"


def schema_modules() -> Path:
    """tests/grafana-schema/node_modules with the pinned packages installed; installs them when missing or stale."""
    modules = SCHEMA_DIR / "node_modules"
    want = hashlib.sha256((SCHEMA_DIR / "package-lock.json").read_bytes()).hexdigest()
    with open(SCHEMA_DIR / ".install.lock", "w") as lock:  # pytest-xdist workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = modules / _STAMP
        if not (stamp.exists() and stamp.read_text() == want):
            npm = shutil.which("npm")
            assert npm, "npm missing: the dashboard's schema check needs Node.js and npm (Debian packages nodejs, npm)"
            out = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=SCHEMA_DIR,
                capture_output=True,
                text=True,
                check=False,
            )
            assert out.returncode == 0, f"npm ci in {SCHEMA_DIR} failed:\n{out.stdout}{out.stderr}"
            stamp.write_text(want)
    return modules
