"""modules/aks-node-pool's default_node_pool (system_pool = true) holds what the Pulumi NetworkOptimizedCluster puts
in its inline system pool: every system-pool vector's expected block, read back from the agent pool fields the
component builds (``_pool_settings``, Pulumi SDK argument objects only: no engine, nothing registered)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from wirespeed.azure import pools
from wirespeed.azure.components import _pool_settings
from wirespeed.sizing import aks_sysctls
from wirespeed.terraform import aks_node_pool

SYSTEM_CASES = [
    c
    for c in aks_node_pool.vectors_document()["cases"]
    if c["inputs"].get(aks_node_pool.SYSTEM_VARIABLE) and "expected" in c
]


def _as_azurerm(name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The component's agent pool fields under azurerm's default_node_pool attribute names."""
    sysctls = pulumi.get(settings["linux_os_config"], "sysctls")
    by_kernel_name: dict[str, int | str] = {}
    for kernel_name in aks_sysctls.supported_kernel_names():
        value = pulumi.get(sysctls, aks_sysctls.sdk_field(kernel_name))
        if value is not None:
            by_kernel_name[kernel_name] = value
    return {
        "name": name,
        "vm_size": settings["vm_size"],
        "os_sku": settings["os_sku"],
        "zones": settings.get("availability_zones"),
        "max_pods": settings.get("max_pods"),
        "auto_scaling_enabled": settings["enable_auto_scaling"],
        "node_count": settings["count"],
        "min_count": settings.get("min_count"),
        "max_count": settings.get("max_count"),
        "node_labels": settings["node_labels"],
        "node_taints": settings.get("node_taints", []),
        "upgrade_settings": {"max_surge": pulumi.get(settings["upgrade_settings"], "max_surge")},
        "sysctl_config": aks_node_pool.sysctl_config(by_kernel_name),
        "tags": settings.get("tags", {}),
    }


def test_there_are_system_pool_vectors() -> None:
    assert len(SYSTEM_CASES) >= 2


@pytest.mark.parametrize("case", SYSTEM_CASES, ids=lambda c: str(c["name"]))
def test_default_node_pool_is_the_pulumi_clusters_system_pool(case: dict[str, Any]) -> None:
    fields = {k: v for k, v in case["inputs"].items() if k != "kubernetes_cluster_id"}
    if aks_node_pool.REASON_VARIABLE in fields:  # the module's name for the spec's allow_non_network_optimised
        fields["reason"] = fields.pop(aks_node_pool.REASON_VARIABLE)
    spec = aks_node_pool._spec(fields)
    plan, problems = pools.check_pool(spec, system=True)
    assert problems == []
    assert plan is not None
    assert case["expected"]["default_node_pool"] == _as_azurerm(spec.name, _pool_settings(plan))
