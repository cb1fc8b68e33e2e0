"""The pure core must load without Pulumi or any cloud SDK: the policy pack and CLI depend on it being light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pulumi",
    "pulumi_policy",
    "pulumi_azure_native",
    "pulumi_aws",
    "pulumi_kubernetes",
    "boto3",
    "botocore",
    "moto",
    "azure",
    "matplotlib",
)


@pytest.mark.parametrize(
    "module",
    [
        "wirespeed.sizing",
        "wirespeed.catalog",
        "wirespeed.profile",
        "wirespeed.manifests",
        "wirespeed.cli",
        "wirespeed.rules",
        "wirespeed.userdata",
    ],
)
def test_core_imports_no_cloud_sdk(module):
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    offenders = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert offenders == []


def test_sizing_does_not_load_pydantic():
    code = "import sys, wirespeed.sizing; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
