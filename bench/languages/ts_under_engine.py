"""One TypeScript program under the real Pulumi engine (issue 26, item 6): bench/languages/ts-node-tuning, the
NodeTuning component through the generated TypeScript SDK (sdk/nodejs), run by the CLI `make engine` builds, a
Node.js language host built from pulumi/pulumi's source (build-nodejs-host.sh), the wirespeed provider's executable
plugin and the kubernetes provider, against a kube-apiserver of its own (tests/apiserver.py). Not part of CI: the
language host's source does not come from a package registry. Prints one JSON object; RESULTS.md records a run.

Checks, each printed: `pulumi up` creates exactly the objects `wirespeed render node-tuning --profile throughput`
prints (field by field, as tests/engine/test_engine_yaml_node_tuning.py compares them); `pulumi preview
--expect-no-changes` is clean; `pulumi destroy` leaves the API server's listing as it was.

Usage (as root, from the repository, after make venv engine apiserver):
  .venv/bin/python bench/languages/ts_under_engine.py --host-dir DIR_WITH_pulumi-language-nodejs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), *(str(p) for p in sorted((ROOT / "tests").iterdir()) if p.is_dir())]

import yaml  # noqa: E402

import pulumi_cli  # noqa: E402
from apiserver import running, stand_in_controllers  # noqa: E402
from test_engine_yaml_node_tuning import differences, identity, listing  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "ts-node-tuning"
NAMESPACE = "wirespeed-system"  # the component's default


def project_copy(folder: Path) -> Path:
    shutil.copytree(PROGRAM, folder)
    program = yaml.safe_load((folder / "Pulumi.yaml").read_text())
    for plugin in program["plugins"]["providers"]:
        plugin["path"] = str((PROGRAM / plugin["path"]).resolve())
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    package = json.loads((folder / "package.json").read_text())
    package["dependencies"]["@pulumi/wirespeed"] = f"file:{ROOT / 'sdk' / 'nodejs'}"
    (folder / "package.json").write_text(json.dumps(package, indent=4))
    (folder / "package-lock.json").unlink()
    subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=folder, check=True, capture_output=True)
    sdk = folder / "node_modules" / "@pulumi" / "wirespeed"
    if not (sdk / "bin" / "index.js").is_file():  # npm 11 runs no install scripts unless allowed
        subprocess.run(["npx", "--prefix", str(folder), "tsc", "-p", str(sdk)], cwd=folder, check=True)
    return folder


def rendered() -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "wirespeed"), "render", "node-tuning", "--profile", "throughput",
         "--namespace", NAMESPACE, "--output", "json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    objects: list[dict[str, Any]] = json.loads(done.stdout)
    return objects


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host-dir", type=Path, required=True)
    args = parser.parse_args()
    result: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with (
        tempfile.TemporaryDirectory() as tmp,
        running(Path(tmp) / "apiserver") as server,
        stand_in_controllers(server) as controllers,
    ):
        baseline = listing(server)
        project = project_copy(Path(tmp) / "project")
        home = Path(tmp) / "home"
        env = {
            "WIRESPEED_PROVIDER_PYTHON": sys.executable,
            "KUBECONFIG": str(server.admin_kubeconfig),
            "PATH": f"{args.host_dir.resolve()}{os.pathsep}{pulumi_cli.BIN}{os.pathsep}{os.environ['PATH']}",
        }

        def pulumi(*argv: str) -> subprocess.CompletedProcess[str]:
            started = time.monotonic()
            done = pulumi_cli.run(list(argv), project, home, extra_env=env)
            result.setdefault("steps", []).append(
                {"pulumi": " ".join(argv), "exit": done.returncode, "seconds": round(time.monotonic() - started, 1)}
            )
            if done.returncode != 0:
                print(done.stdout, done.stderr, file=sys.stderr)
            return done

        pulumi("stack", "init", "bench")
        up = pulumi("up", "--yes", "--skip-preview")
        want = rendered()
        created = listing(server) - baseline
        result["created_equals_rendered"] = created == {identity(o) for o in want}
        result["field_differences"] = []
        for obj in want:
            kind, namespace, name = identity(obj)
            where = ["-n", namespace] if namespace else []
            live = json.loads(server.kubectl("get", kind.lower(), name, *where, "-o", "json").stdout)
            result["field_differences"] += [f"{kind}/{name}{d}" for d in differences(obj, live)]
        result["objects"] = len(want)
        result["up_exit"] = up.returncode
        result["preview_no_changes_exit"] = pulumi("preview", "--expect-no-changes").returncode
        result["destroy_exit"] = pulumi("destroy", "--yes", "--skip-preview").returncode
        result["left_behind"] = sorted(map(list, listing(server) - baseline))
        result["controller_errors"] = controllers.errors
    ok = (
        result["created_equals_rendered"]
        and not result["field_differences"]
        and result["up_exit"] == result["preview_no_changes_exit"] == result["destroy_exit"] == 0
        and not result["left_behind"]
    )
    result["ok"] = bool(ok)
    print(json.dumps(result, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
