"""`wirespeed plan` through the real entry point: every workload-file problem names the file and the JSON path."""

from __future__ import annotations

import json

import pytest

from clirun import invoke, wirespeed
from conftest import ROOT
from wirespeed.cli._common import one_line

CHECKOUT = json.loads((ROOT / "examples" / "workloads" / "checkout-api.json").read_text())


def test_plan_bundled_example(tmp_path):
    # Outside a Pulumi project (no Pulumi.yaml in the working directory) `plan` falls back to the bundled workload.
    out = wirespeed("plan", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outbound"]["feasible"] is True
    assert data["profile"]["sysctls"]["net.core.netdev_max_backlog"] == 32_768


def _with(**changes: object) -> bytes:
    doc = json.loads(json.dumps(CHECKOUT))
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        node = doc
        for key in parents:
            node = node[key]
        node[leaf] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            b"\xff{}", "--workload: {path}: byte 0 (0xff) is not UTF-8; give a UTF-8 workload JSON file", id="not-utf8"
        ),
        pytest.param(
            b"{",
            "{path}: 'line 1' is not allowed: valid JSON (Expecting property name enclosed in double quotes)",
            id="not-json",
        ),
        pytest.param(
            b"[]",
            "{path}: (the whole document): a JSON array is not allowed: must be a JSON object",
            id="array",
        ),
        pytest.param(
            b'{"cloud": "azure", "node_pools": [{"name": "a"}], "nic": {"host_line_rate_gbps": 25}}',
            "{path}: not a valid workload: 5 problems:\n  name: missing (a required field)\n  instance_type: missing "
            "(a required field)\n  node_pools.0.max_count: missing (a required field)\n  outbound: missing (a required "
            "field)\n  nic.driver: missing (a required field)\n",
            id="missing-fields-all-named-never-a-raw-dict",
        ),
        pytest.param(
            _with(cloud="gcp"), "{path}: cloud: 'gcp' is not allowed: Input should be 'azure' or 'aws'", id="cloud"
        ),
        pytest.param(
            _with(outbound__headroom=0.5),
            "{path}: outbound.headroom: 0.5 is not allowed: must be between 1 and 10",
            id="headroom-named-by-json-path",
        ),
        pytest.param(
            _with(outbound__hold_seconds=-1.5),
            "{path}: outbound.hold_seconds: -1.5 is not allowed: must be between 1 and 3,600",
            id="hold-named-by-json-path",
        ),
        pytest.param(
            _with(nic__driver="e1001"),
            "{path}: nic.driver: unknown NIC driver 'e1001': did you mean e1000e? known drivers are "
            "e1000e, ena, hv_netvsc, igb, igbvf, mana, mlx4_en, mlx5_core, virtio_net",
            id="driver",
        ),
        pytest.param(
            _with(instance_type="D16s_v9"),
            "{path}: instance_type: unknown instance type 'D16s_v9': did you mean ",
            id="instance-type",
        ),
        pytest.param(
            _with(outbound__connections_per_second=None),
            "{path}: outbound.connections_per_second: None is not allowed: required for Azure (> 0)",
            id="azure-without-rate",
        ),
    ],
)
def test_plan_bad_workload_exit_2_names_the_file_and_field(tmp_path, content, message):
    path = tmp_path / "w.json"
    path.write_bytes(content)
    out = invoke("plan", "--workload", str(path))
    assert out.returncode == 2
    assert out.stderr.startswith("error: " + message.format(path=path))
    # One `error:` line, then one line per problem: never a raw dict, never the problems run together.
    assert out.stderr.count("error:") == 1
    assert out.stderr.count("\n") == max(1, message.count("\n"))


def test_plan_workload_directory_and_missing_file(tmp_path):
    out = invoke("plan", "--workload", str(tmp_path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --workload: {tmp_path}: is a directory, not a regular file; give a workload JSON file\n",
    )
    out = wirespeed("plan", "--workload", str(tmp_path / "absent.json"))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --workload: {tmp_path / 'absent.json'}: cannot be read: No such file or directory; give a "
        "readable workload JSON file\n",
    )


def test_plan_not_utf8_through_the_console_script(tmp_path):
    path = tmp_path / "w.json"
    path.write_bytes(b"\x80")
    out = wirespeed("plan", "--workload", str(path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --workload: {path}: byte 0 (0x80) is not UTF-8; give a UTF-8 workload JSON file\n",
    )


def test_plan_error_stays_one_line_when_the_path_has_a_newline(tmp_path):
    path = tmp_path / "a\nb.json"
    out = invoke("plan", "--workload", str(path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: --workload: {one_line(str(path))}: cannot be read: No such file or directory; give a readable "
        "workload JSON file\n",
    )
    path.write_bytes(b"[]")
    out = invoke("plan", "--workload", str(path))
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: {tmp_path}/a\\nb.json: (the whole document): a JSON array is not allowed")
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("workload", "speaks", "never"),
    [
        pytest.param("ingest-eks.json", "the kernel's int range, which EKS does not narrow", "AKS", id="aws"),
        pytest.param("checkout-api.json", "within AKS's 1,000..3,240,000", "on AWS", id="azure"),
    ],
)
def test_plan_backlog_speaks_of_the_workloads_cloud(workload, speaks, never):
    out = wirespeed("plan", "--workload", str(ROOT / "examples" / "workloads" / workload))
    assert out.returncode == 0, out.stderr
    assert speaks in out.stdout
    assert never not in out.stdout
