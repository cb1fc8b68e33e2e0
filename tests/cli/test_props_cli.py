"""Property tests: each command that reads a file or numbers keeps the exit-code contract on hostile input.

Every example is a valid input with a few mutations (tests/hostile.py: types changed, keys dropped, huge numbers,
NaN, nesting thousands deep), or a broken encoding, so the generated input gets past the first parser into the
readers and rules behind it. The commands run in-process through typer's runner (tests/clirun.py), which re-raises
any exception escaping the app: a crash shows as the test's own traceback. What each property means:

- ``check`` on Pulumi stack exports, ``pulumi preview --json`` output, ``terraform show -json`` plans (AKS, EKS,
  Kubernetes manifests) and Kubernetes objects and lists: exit 0 (nothing mandatory violated), 1 (a verdict,
  printed on stdout) or 2 (one ``error:`` line); never a traceback. A document that is valid JSON of none of the
  three shapes is refused (exit 2), never passed: a gate does not pass what it could not read.
- ``profile validate`` on mutated built-in and shared-vector profiles: exit 0 exactly when the library's model
  accepts the document (the CLI adds no leniency of its own), else exit 2 with one ``error:`` line per problem.
- ``plan --workload`` on mutated example workloads: exit 0 or 2 with one ``error:`` line.
- ``size`` (every sub-command) on generated numbers around each limit and odd number spellings (``1e1``, ``1_000``,
  Arabic digits, NaN, 5,000 digits): exit 0 or 2 with one ``error:`` line naming the flag.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from clirun import invoke
from conftest import ROOT
from hostile import as_outcome, assert_exit_contract, bounded, deep_inside, encode, file_bytes, mutated
from wirespeed.manifests import node_tuning_objects
from wirespeed.profile import ProfileError, load_profile
from wirespeed.profiles import ASSUMPTIONS, builtin_profile

FIXTURES = ROOT / "tests" / "fixtures"
PULUMI_DOCUMENTS = [
    json.loads((FIXTURES / "check" / name).read_text())
    for name in ("aks-export.json", "aks-preview.json", "pr-preview-violations.json")
]
TERRAFORM_PLANS = [
    json.loads(path.read_text()) for path in sorted((FIXTURES / "terraform").glob("*/plan.json"))
]  # AKS, EKS and Kubernetes manifests (kubernetes_manifest), compliant and not
PROFILE_VECTORS = json.loads((ROOT / "tests" / "vectors" / "profiles.json").read_text())
WORKLOADS = [json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "workloads").glob("*.json"))]


def _kubernetes_export() -> dict[str, Any]:
    """A stack export of the rendered tuning objects as Pulumi's Kubernetes provider records them, plus a
    ``v1/List`` of them (what `kubectl get -o json` returns)."""
    objects = node_tuning_objects([builtin_profile("throughput")])
    resources: list[dict[str, Any]] = [
        {"urn": "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev", "type": "pulumi:pulumi:Stack", "custom": False}
    ]
    for index, obj in enumerate(objects):
        group_version = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
        type_token = f"kubernetes:{group_version}:{obj['kind']}"
        resources.append(
            {
                "urn": f"urn:pulumi:dev::p::{type_token}::o{index}",
                "type": type_token,
                "custom": True,
                "inputs": obj,
                "outputs": obj,
            }
        )
    listed = {"apiVersion": "v1", "kind": "List", "items": objects}
    resources.append(
        {"urn": "urn:pulumi:dev::p::kubernetes:core/v1:List::all", "type": "kubernetes:core/v1:List",
         "custom": True, "inputs": listed, "outputs": listed}
    )  # fmt: skip
    return {"version": 3, "deployment": {"manifest": {}, "resources": resources}}


KUBERNETES_EXPORT = _kubernetes_export()
KUBERNETES_LIST = {"apiVersion": "v1", "kind": "List", "items": node_tuning_objects([builtin_profile("throughput")])}
CHECK_DOCUMENTS = [*PULUMI_DOCUMENTS, *TERRAFORM_PLANS, KUBERNETES_EXPORT]


class Files:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._names = itertools.count()

    def write(self, content: bytes) -> str:
        path = self.root / f"f{next(self._names)}.json"
        path.write_bytes(content)
        return str(path)


@pytest.fixture(scope="module")
def files() -> Iterator[Files]:
    with tempfile.TemporaryDirectory() as root:
        yield Files(Path(root))


def run(*argv: str) -> Any:
    return as_outcome(invoke(*argv))


# --- check ---------------------------------------------------------------------------------------------------------


@bounded(100)
@given(content=file_bytes(CHECK_DOCUMENTS), fmt=st.sampled_from(["table", "json", "github", "sarif"]))
def test_check_keeps_the_contract_on_mutated_documents(files, content, fmt):
    argv = ["check", files.write(content), "--format", fmt]
    assert_exit_contract(argv, run(*argv), verdict_exit_1=True)


def test_the_unmutated_documents_are_read(files):
    """The seeds themselves get past the reader (else every mutation above would stop at its first line)."""
    for document in CHECK_DOCUMENTS:
        out = run("check", files.write(json.dumps(document).encode()), "--format", "json")
        assert out.returncode in (0, 1), out.stderr


@bounded(40)
@given(
    content=st.one_of(
        st.just(encode(KUBERNETES_LIST)),
        mutated(KUBERNETES_LIST).map(encode),
        deep_inside(encode(KUBERNETES_LIST)),
    )
)
def test_check_keeps_the_contract_on_mutated_kubernetes_lists(files, content):
    """Kubernetes objects (a `kind: List` too) are an input `check` reads as GitOps teams keep them: whatever the
    mutation, a verdict (0 or 1) or one `error:` line (2), never a traceback."""
    argv = ["check", files.write(content)]
    assert_exit_contract(argv, run(*argv), verdict_exit_1=True)


def test_the_unmutated_kubernetes_list_is_read(files):
    out = run("check", files.write(encode(KUBERNETES_LIST)), "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(out.stdout)["input"] == "Kubernetes YAML"


@bounded(40)
@given(config=st.one_of(mutated({"all": "mandatory", "aks-snat-ports-minimum": {"minimumPorts": 2048}})))
def test_check_keeps_the_contract_on_mutated_policy_configs(files, config):
    argv = ["check", str(FIXTURES / "check" / "aks-export.json"), "--config", files.write(json.dumps(config).encode())]
    assert_exit_contract(argv, run(*argv), verdict_exit_1=True)


# --- profile validate ------------------------------------------------------------------------------------------


PROFILES = [builtin_profile(name).to_json_dict() for name in sorted(ASSUMPTIONS)] + [
    case["profile"] for case in PROFILE_VECTORS["valid"]
]


def model_accepts(content: bytes) -> bool:
    try:
        load_profile(content.decode("utf-8"))
    except (ProfileError, UnicodeDecodeError):
        return False
    return True


@bounded(100)
@given(content=file_bytes(PROFILES))
def test_profile_validate_exits_0_exactly_when_the_model_accepts(files, content):
    argv = ["profile", "validate", files.write(content)]
    out = run(*argv)
    assert_exit_contract(argv, out, lists_every_problem=True)
    assert (out.returncode == 0) is model_accepts(content), (content[:300], out.stderr)


# --- plan --workload ---------------------------------------------------------------------------------------------


@bounded(80)
@given(content=file_bytes(WORKLOADS), as_json=st.booleans())
@example(content=b'{"value": {"name": "checkout-api"}}', as_json=False)  # CI stop 23: seven problems, one header
def test_plan_workload_keeps_the_contract(files, content, as_json):
    argv = ["plan", "--workload", files.write(content), *(["--json"] if as_json else [])]
    # A workload file's problems are listed together, one indented line each (5680d50).
    assert_exit_contract(argv, run(*argv), lists_every_problem=True)


# --- size --------------------------------------------------------------------------------------------------------


def spelled(value: Any) -> st.SearchStrategy[str]:
    """A number as a user might type it, or mistype it."""
    return st.sampled_from([str(value), f"{value}.0", f" {value}", f"{value}e0", f"+{value}", f"{value}_0"])


number_text = st.one_of(
    st.sampled_from(
        [0, 1, 2, 7, 8, 16, 100, 101, 1_000, 1_001, 1_024, 4_096, 64_000, 64_008, 64_512, 3_240_000]
    ).flatmap(spelled),
    st.integers(-5, 10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "1e1", "0x10", "1_000", "\u0661\u0660", "", "-0", "9" * 5_000]),
)
pool_text = st.one_of(
    st.builds(lambda m, s: f"{m}:{s}", st.integers(-1, 1_002), st.sampled_from(
        ["0", "1", "1000", "1001", "10%", "100%", "100.5%", "0%", "1e1%", "nan%", "%", "", "-1", "2:3"])),
    st.integers(-1, 1_002).map(str),
    number_text,
)  # fmt: skip
drivers = st.sampled_from(["mlx5_core", "mana", "ena", "hv_netvsc", "e1000e", "virtio_net", "nosuch", ""])


@st.composite
def size_argv(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(["azure-lb", "azure-natgw", "aws-natgw", "rings", "backlog", "mtu"]))
    argv = ["size", command]

    def opt(flag: str, values: st.SearchStrategy[str], p_given: int = 3) -> None:
        if draw(st.integers(0, 3)) < p_given:
            argv.extend([flag, draw(values)])

    if command == "azure-lb":
        for _ in range(draw(st.integers(1, 3))):
            argv.extend(["--pool", draw(pool_text)])
        if draw(st.booleans()):
            opt("--ports", number_text, 4)
        else:
            opt("--connections-per-second", number_text, 4)
            opt("--hold-seconds", number_text, 1)
            opt("--headroom", number_text, 1)
        opt("--outbound-ips", number_text, 1)
    elif command == "azure-natgw":
        opt("--flows", number_text, 4)
    elif command == "aws-natgw":
        opt("--connections", number_text, 4)
        opt("--azs", number_text, 2)
        opt("--mode", st.sampled_from(["zonal", "regional", "Zonal", ""]), 1)
    elif command in ("rings", "backlog"):
        if command == "rings":
            argv.extend(["--driver", draw(drivers)])
        opt("--line-rate-gbps", number_text, 4)
        opt("--stall-ms", number_text, 1)
        opt("--packet-bytes", number_text, 1)
    else:
        argv.extend(["--driver", draw(drivers)])
        if draw(st.booleans()):
            argv.append("--crosses-gateway")
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@bounded(150)
@given(argv=size_argv())
def test_size_commands_keep_the_contract_on_generated_numbers(argv):
    out = run(*argv)
    assert_exit_contract(argv, out)
    if out.returncode == 2:
        flags = [token for token in argv if token.startswith("--")]
        assert any(flag in out.stderr for flag in flags) or "missing" in out.stderr.lower(), (argv, out.stderr)
