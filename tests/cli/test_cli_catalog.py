"""`wirespeed catalog ...` through the real entry point."""

from __future__ import annotations

import json

import pytest

from clirun import invoke, wirespeed


def test_catalog_show_forgiving_name():
    out = wirespeed("catalog", "show", "d16s_v6", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["name"] == "Standard_D16s_v6"


def test_catalog_show_unknown_suggests_nearest():
    out = wirespeed("catalog", "show", "Standard_D16s_v7")
    assert out.returncode == 2
    assert out.stderr.startswith("error: unknown instance type 'Standard_D16s_v7': did you mean ")
    assert "D16s_v6" in out.stderr


def test_catalog_list_filters():
    out = wirespeed("catalog", "list", "--cloud", "aws", "--network-optimised", "--min-gbps", "100", "--json")
    assert out.returncode == 0, out.stderr
    names = {t["name"] for t in json.loads(out.stdout)}
    assert "c5n.18xlarge" in names
    assert all(t["network_optimised"] and t["baseline_gbps"] >= 100 for t in json.loads(out.stdout))


def test_catalog_list_marks_a_preview_series():
    out = wirespeed("catalog", "list", "--cloud", "azure", "--min-gbps", "200")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()[1:] if line.strip()}
    assert rows["Standard_D128ns_v6"].rstrip().endswith("preview")
    assert not rows["Standard_E192is_v6"].rstrip().endswith("preview")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--min-gbps", "-5"], "error: --min-gbps: -5.0 is not allowed: a finite number >= 0 (Gb/s)", id="negative"
        ),
        pytest.param(
            ["--min-gbps", "nan"], "error: --min-gbps: nan is not allowed: a finite number >= 0 (Gb/s)", id="nan"
        ),
        pytest.param(
            ["--min-gbps", "inf"], "error: --min-gbps: inf is not allowed: a finite number >= 0 (Gb/s)", id="inf"
        ),
        pytest.param(["--cloud", "gcp"], "error: --cloud: 'gcp' is not allowed: one of azure, aws", id="cloud"),
    ],
)
def test_catalog_list_bad_filter_exit_2_names_the_flag(args, message):
    out = invoke("catalog", "list", *args)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", message + "\n")


def test_catalog_list_negative_through_the_console_script():
    out = wirespeed("catalog", "list", "--min-gbps", "-5")
    assert (out.returncode, out.stderr) == (2, "error: --min-gbps: -5.0 is not allowed: a finite number >= 0 (Gb/s)\n")
