"""The rules over registered resources (what `wirespeed plan DIR` records), converted as the engine marshals them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from wirespeed.check.registered import as_engine_value, resources_of, verdicts
from wirespeed.rules import resolve_config


@dataclass(frozen=True)
class Registration:
    """Plain data in RegisteredResource's shape (wirespeed.program.model); built here without running a program."""

    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None
    id: str = ""


CLUSTER = Registration(
    urn="urn:pulumi:dev::p::azure-native:containerservice:ManagedCluster::aks",
    type="azure-native:containerservice:ManagedCluster",
    name="aks",
    inputs={
        "resourceName": "aks",
        "networkProfile": {"loadBalancerProfile": {"allocatedOutboundPorts": 0, "managedOutboundIPs": {"count": 2}}},
        "agentPoolProfiles": (
            {
                "name": "system",
                "count": 3,
                "vmSize": "Standard_D4ds_v6",
                "linuxOSConfig": {"sysctls": {"netCoreNetdevMaxBacklog": 32768}},
            },
        ),
    },
)
TUNING = Registration(
    urn="urn:pulumi:dev::p::kubernetes:apps/v1:DaemonSet::wirespeed-agent-throughput",
    type="kubernetes:apps/v1:DaemonSet",
    name="wirespeed-agent-throughput",
    inputs={"metadata": {"labels": {"app.kubernetes.io/name": "wirespeed-agent"}}},
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(4000, 4000.0, id="int-to-float"),
        pytest.param(True, True, id="bool-stays"),
        pytest.param(None, None, id="null"),
        pytest.param((1, "a"), [1.0, "a"], id="tuple-to-list"),
        pytest.param({1: {"b": [2]}}, {"1": {"b": [2.0]}}, id="nested-keys-as-strings"),
    ],
)
def test_values_cross_the_wire_as_protobuf_struct_would_carry_them(value, expected):
    converted = as_engine_value(value)
    assert converted == expected
    assert type(converted) is type(expected)


def test_registered_props_are_read_only_with_float_numbers():
    (resource,) = resources_of([CLUSTER])
    profile = resource.props["networkProfile"]["loadBalancerProfile"]
    assert isinstance(profile, Mapping)
    assert type(profile["allocatedOutboundPorts"]) is float
    assert resource.id is None
    with pytest.raises(TypeError):
        profile["allocatedOutboundPorts"] = 4000  # type: ignore[index]


def test_verdicts_report_the_rule_a_registration_breaks():
    found = verdicts([CLUSTER, TUNING], resolve_config(None))
    assert [(v.rule_id, v.resource_name, v.enforcement) for v in found] == [
        ("aks-allocated-outbound-ports-default", "aks", "mandatory")
    ]
