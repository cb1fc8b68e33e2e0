"""Pulumi providers bridged from a Terraform provider, read through that provider's translation.

pulumi-azure ("classic") is bridged from azurerm by pulumi-terraform-bridge: its resources are azurerm's, its
property names azurerm's in camelCase (``default_node_pool.vm_size`` is ``defaultNodePool.vmSize``), and a block
of at most one item (azurerm ``MaxItems: 1``: ``default_node_pool``, ``network_profile``,
``load_balancer_profile``, ``linux_os_config``, ``sysctl_config``, ``upgrade_settings``) is an object, not a
one-item list (as recorded in pulumi/pulumi-azure provider/testdata/recorded/TestProviderUpgrade/
containerservice_k8scluster/5.89.0/stack.json, tests/fixtures/real/; the node pool's names in
pulumi/pulumi-azure sdk/nodejs/containerservice/kubernetesClusterNodePool.ts at
00f102daac26f244a5bcffcb7cf5f2ee6fa2dd18, ``kubernetesClusterId``, ``linuxOsConfig``, ``autoScalingEnabled``).
``wirespeed.values.at`` steps into both shapes, so the azurerm translation (``wirespeed.check.terraform``) reads
them once their names are snake_case again: one translation for azurerm plans and pulumi-azure stacks.

Only the top-level properties the translation reads are converted: a cluster's kubeconfigs are secrets nobody needs
decrypted here. A secret among those it reads resolves as everywhere (``readonly``): its value, or ``[secret]``,
which the rule reports as could not be checked. A stack export's outputs fill what the provider computed (an
unset ``outboundPortsAllocated`` reads 0, azurerm's "0 or unset"); the bridge's ``__defaults`` bookkeeping key is
dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from wirespeed.check.readonly import ReadOnlyMapping, view
from wirespeed.check.terraform.translations import TRANSLATIONS
from wirespeed.values import SECRET_SIG, SIG_KEY, UNKNOWN, UNKNOWN_SENTINELS, plain

if TYPE_CHECKING:
    from wirespeed.check.secrets import StackSecrets

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_T = TypeVar("_T")
DEFAULTS_KEY = "__defaults"  # pulumi-terraform-bridge: which inputs the provider defaulted


@dataclass(frozen=True)
class Bridged:
    terraform_type: str  # whose translation reads it
    reads: frozenset[str]  # the top-level properties that translation reads, in the bridged (camelCase) names
    # propertyDependencies key -> the one the rules link by (the AgentPool's resourceName points at its cluster)
    dependencies: Mapping[str, str]


_POOL = frozenset(
    {
        "name",
        "vmSize",
        "nodeCount",
        "enableAutoScaling",  # pulumi-azure 5.x (azurerm 3.x)
        "autoScalingEnabled",  # pulumi-azure 6.x (azurerm 4.x)
        "minCount",
        "maxCount",
        "osType",
        "tags",
        "nodeLabels",
        "upgradeSettings",
        "linuxOsConfig",
    }
)
BRIDGED: dict[str, Bridged] = {
    "azure:containerservice/kubernetesCluster:KubernetesCluster": Bridged(
        "azurerm_kubernetes_cluster",
        frozenset({"name", "resourceGroupName", "location", "defaultNodePool", "networkProfile", "id"}),
        {},
    ),
    "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool": Bridged(
        "azurerm_kubernetes_cluster_node_pool", _POOL | {"kubernetesClusterId"}, {"kubernetesClusterId": "resourceName"}
    ),
    "azure:network/publicIpPrefix:PublicIpPrefix": Bridged(
        "azurerm_public_ip_prefix", frozenset({"prefixLength", "id"}), {}
    ),
}


def snake(name: str) -> str:
    """A bridged property name as the Terraform provider's attribute: ``outboundIpAddressIds`` ->
    ``outbound_ip_address_ids``."""
    return _CAMEL.sub("_", name).lower()


def camel(attribute: str) -> str:
    """A Terraform attribute path as the bridged provider names it: ``network_profile.load_balancer_sku`` ->
    ``networkProfile.loadBalancerSku``."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), attribute)


def _plain(value: Any, secrets: StackSecrets | None) -> Any:
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return _plain(plain(view(value, secrets)), None)  # its value, or [secret]
        return {snake(k): _plain(v, secrets) for k, v in value.items() if k != DEFAULTS_KEY}
    if isinstance(value, list):
        return [_plain(item, secrets) for item in value]
    if isinstance(value, str) and value in UNKNOWN_SENTINELS:
        return UNKNOWN  # the engine's typed sentinels (an unknown block): the one the translation steps on
    return value


def terraform_values(bridged: Bridged, properties: Any, secrets: StackSecrets | None) -> dict[str, Any]:
    """A bridged resource's inputs or outputs as the Terraform provider's values (the properties it reads)."""
    if not isinstance(properties, dict):
        return {}
    return {snake(k): _plain(v, secrets) for k, v in properties.items() if k in bridged.reads}


def native_type(bridged: Bridged) -> str:
    """The azure-native type token the rules judge a bridged resource as."""
    return TRANSLATIONS[bridged.terraform_type].token


def native_props(bridged: Bridged, properties: Any, secrets: StackSecrets | None) -> ReadOnlyMapping:
    """A bridged resource's inputs or outputs in the azure-native shape the rules read: what `wirespeed check`
    (its stack exports) and the CrossGuard pack (the engine's props, as plain values) both judge."""
    return ReadOnlyMapping(TRANSLATIONS[bridged.terraform_type].props(terraform_values(bridged, properties, secrets)))


def native_dependencies(bridged: Bridged, dependencies: Mapping[str, _T]) -> dict[str, _T]:
    """Property dependencies under the names the rules link by."""
    return {bridged.dependencies.get(name, name): urns for name, urns in dependencies.items()}


def fields(bridged: Bridged) -> tuple[tuple[str, str], ...]:
    """The rules' field names -> the bridged provider's, for reports (the Terraform translation's, camelCased)."""
    translation = TRANSLATIONS[bridged.terraform_type]
    return tuple((rule_name, camel(attribute)) for rule_name, attribute in translation.fields)


def adjusted_message(bridged: Bridged, message: str, provider: str) -> str:
    """A rule's message with the bridged provider's names of the fields it mentions appended."""
    names = [
        f"{rule_name} is {own}"
        for rule_name, own in fields(bridged)
        if re.search(rf"(?<![A-Za-z]){re.escape(rule_name)}(?![A-Za-z])", message)
    ]
    return message + (f" (In {provider}: {'; '.join(names)}.)" if names else "")


def reported(type_token: str, message: str) -> str:
    """A violation's message on a resource of ``type_token`` as check and the pack both report it: a bridged
    resource's with its provider's property names appended, any other's unchanged."""
    via = BRIDGED.get(type_token)
    if via is None:
        return message
    provider = f"pulumi-{type_token.split(':')[0]}"  # azure:... is pulumi-azure
    return adjusted_message(via, message, provider)
