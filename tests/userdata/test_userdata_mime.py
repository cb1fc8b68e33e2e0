"""The user data documents: AL2023 MIME multipart (nodeadm NodeConfig + the boot script) and Bottlerocket TOML.

Parsed back with the standard library's email and tomllib parsers, as EC2's cloud-init and Bottlerocket would
read them. Regenerate the golden files with UPDATE_GOLDEN=1 after an intended change.
"""

from __future__ import annotations

import email
import os
import tomllib

import pytest
import yaml

from builtin_profiles import BALANCED_BACKLOG
from conftest import ROOT
from wirespeed.profiles import builtin_profile
from wirespeed.userdata import (
    ClusterDetails,
    render_al2023_user_data,
    render_bottlerocket_settings,
    render_script,
)

GOLDEN = ROOT / "tests" / "golden" / "userdata"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    golden = GOLDEN / name
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"{name} is stale: UPDATE_GOLDEN=1 pytest {__file__}"


def test_al2023_golden():
    check_golden("throughput-al2023.mime", render_al2023_user_data(builtin_profile("throughput")))


def test_bottlerocket_golden():
    check_golden("throughput-bottlerocket.toml", render_bottlerocket_settings(builtin_profile("throughput")))


@pytest.mark.parametrize("name", ["throughput", "balanced"])
def test_al2023_parts_parse_back(name):
    profile = builtin_profile(name)
    message = email.message_from_string(render_al2023_user_data(profile))
    assert message.get_content_type() == "multipart/mixed"
    config, script = message.get_payload()
    assert [config.get_content_type(), script.get_content_type()] == ["application/node.eks.aws", "text/x-shellscript"]
    assert yaml.safe_load(config.get_payload(decode=True)) == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {"kubelet": {"flags": [f"--node-labels=wirespeed.io/profile={name}"]}},
    }
    assert script.get_payload(decode=True).decode() == render_script(profile)


def test_cluster_details_for_self_managed_nodes():
    cluster = ClusterDetails("prod", "https://ABC.gr7.eu-west-1.eks.amazonaws.com", "LS0tLS1CRUdJTg==", "10.100.0.0/16")
    message = email.message_from_string(render_al2023_user_data(builtin_profile("throughput"), cluster))
    config = yaml.safe_load(message.get_payload()[0].get_payload(decode=True))
    assert config["spec"]["cluster"] == {
        "name": "prod",
        "apiServerEndpoint": "https://ABC.gr7.eu-west-1.eks.amazonaws.com",
        "certificateAuthority": "LS0tLS1CRUdJTg==",
        "cidr": "10.100.0.0/16",
    }


def test_bottlerocket_settings_parse_as_toml():
    settings = tomllib.loads(render_bottlerocket_settings(builtin_profile("balanced")))
    # The bootstrap container (rings and MTU) is tested in test_userdata_bottlerocket.py.
    assert settings["settings"].pop("bootstrap-containers").keys() == {"wirespeed-tuning"}
    assert settings == {
        "settings": {
            "kubernetes": {"node-labels": {"wirespeed.io/profile": "balanced"}},
            "kernel": {"sysctl": {"net.core.netdev_max_backlog": str(BALANCED_BACKLOG)}},
        }
    }
