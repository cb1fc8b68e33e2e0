"""Inputs of an AKS agent pool that AKS takes only when the pool is created: changing one means a new pool.

Each entry cites the AKS documentation that says so. The plan lists them per pool, and ``--compare`` flags a
pool whose values changed since a previous plan ("replaces the pool": new VMs, workloads drained and moved).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CreateOnly:
    input: str
    """The engine (camelCase) path in ``AgentPool`` inputs and in a ``ManagedCluster`` ``agentPoolProfiles`` item."""
    why: str
    source: str


AGENT_POOL_CREATE_ONLY: tuple[CreateOnly, ...] = (
    CreateOnly(
        "vmSize",
        "a VM Scale Set pool's VM size cannot change in place: resize by adding a pool and draining the old one",
        "learn.microsoft.com/azure/aks/manage-node-pools#limitations (\"You can't change the VM size of a node "
        'pool after you create it"); learn.microsoft.com/azure/aks/resize-node-pool',
    ),
    CreateOnly(
        "linuxOSConfig",
        "custom node configuration (sysctls) is applied when a pool's nodes are built: set it on a new pool",
        "learn.microsoft.com/azure/aks/custom-node-configuration (configuration is given with `az aks create` or "
        "`az aks nodepool add` and applies to that pool's nodes)",
    ),
    CreateOnly(
        "kubeletConfig",
        "custom kubelet configuration is applied when a pool's nodes are built, like linuxOSConfig",
        "learn.microsoft.com/azure/aks/custom-node-configuration",
    ),
    CreateOnly(
        "availabilityZones",
        "the zones of a pool are fixed when its scale set is created",
        "learn.microsoft.com/azure/aks/reliability-availability-zones-configure (\"You can't change the number of "
        'availability zones after you create a node pool")',
    ),
)
# Deliberately absent: osSKU. AKS migrates Ubuntu <-> AzureLinux in place by reimaging the nodes
# (learn.microsoft.com/azure/aks/upgrade-os-version, "OS SKU migration"), so a change there is a rolling
# reimage, not a new pool; other OS SKU changes are refused by AKS rather than replacing anything.


def create_only_values(inputs: dict[str, object]) -> dict[str, object]:
    """The create-only inputs of one pool as registered (absent ones as None), for display and comparison."""
    return {c.input: inputs.get(c.input) for c in AGENT_POOL_CREATE_ONLY}
