"""Inputs of an AKS agent pool that AKS takes only when the pool is created: changing one means a new pool.

Which inputs, and why, live once, beside the components that set them
(:data:`wirespeed.azure._validate.REPLACE_ON_CHANGE`); this module adds the AKS documentation that says so,
for the plan to cite. A test fails when an input there has no source here. The plan lists them per pool, and
``--compare`` flags a pool whose values changed since a previous plan (new VMs, workloads drained and moved).
"""

from __future__ import annotations

from dataclasses import dataclass

from wirespeed.azure._validate import REPLACE_ON_CHANGE

SOURCES: dict[str, str] = {
    "vmSize": "learn.microsoft.com/azure/aks/manage-node-pools#limitations: \"You can't change the VM size of a node "
    'pool after you create it"; learn.microsoft.com/azure/aks/resize-node-pool',
    "linuxOSConfig": "learn.microsoft.com/azure/aks/custom-node-configuration: OS configuration is given with `az aks "
    "create` or `az aks nodepool add` and applies to the nodes of that new pool",
    "availabilityZones": "learn.microsoft.com/azure/aks/reliability-availability-zones-configure: \"You can't change "
    'the number of availability zones after you create a node pool"',
    "maxPods": 'learn.microsoft.com/azure/aks/configure-azure-cni, "Configure maximum - existing clusters": to '
    "change maxPods, add a node pool with the new value and move the pods",
}
# Deliberately not create-only: osSKU. AKS migrates Ubuntu <-> AzureLinux in place by reimaging the nodes
# (learn.microsoft.com/azure/aks/upgrade-os-version, "OS SKU migration"): a rolling reimage, not a new pool.


@dataclass(frozen=True)
class CreateOnly:
    input: str
    """The engine (camelCase) path in ``AgentPool`` inputs and in a ``ManagedCluster`` ``agentPoolProfiles`` item."""
    why: str
    source: str


AGENT_POOL_CREATE_ONLY: tuple[CreateOnly, ...] = tuple(
    CreateOnly(path, why, SOURCES.get(path, "")) for path, why in REPLACE_ON_CHANGE
)


def create_only_values(inputs: dict[str, object]) -> dict[str, object]:
    """The create-only inputs of one pool as registered (absent ones as None), for display and comparison."""
    return {c.input: inputs.get(c.input) for c in AGENT_POOL_CREATE_ONLY}
