"""`terraform show -json` plans and states, read as the resources wirespeed's rules already judge.

Terraform users get the same gates as Pulumi users: each Terraform resource wirespeed knows is translated into
the Pulumi type token and property names the rules in ``wirespeed.rules`` read (an ``azurerm_kubernetes_cluster``
becomes an ``azure-native:containerservice:ManagedCluster`` with ``networkProfile.loadBalancerProfile...``), and
the same rule functions judge it. Reports name the Terraform address and type, and say which Terraform attribute
a message's field is.

The shapes (https://developer.hashicorp.com/terraform/internals/json-format):

- Plan Representation: top-level ``format_version``, ``terraform_version``, ``planned_values``,
  ``resource_changes``, ``prior_state``, ``configuration``, ... in any order. The planned resources are
  ``resource_changes[]``: ``address``, ``module_address`` (child modules), ``mode``, ``type``, ``name``,
  ``index``, ``provider_name`` and ``change``.
- Change Representation: ``change.actions`` (``create``, ``update``, ``no-op``, ``delete``, ``read``,
  ``forget``, or a replacement's pair), ``change.after`` (the planned values) and ``change.after_unknown``
  (the same structure, ``true`` where a value is known only after apply). A resource is checked when it will
  exist after the apply (its actions hold ``create``, ``update`` or ``no-op``); a ``delete`` or ``forget`` is
  not part of the planned infrastructure and a ``read`` is a data source.
- Values Representation: attribute values as JSON, nested blocks as arrays of objects
  (``default_node_pool: [{...}]``). A `terraform show -json` of a STATE has ``values.root_module`` with
  ``resources[]`` (each with ``address``, ``type``, ``values``) and ``child_modules[]`` of the same shape.
- Configuration Representation: ``configuration.root_module.resources[].expressions.<attr>.references`` and
  ``module_calls.<name>.expressions`` / ``module.outputs``: how a node pool's ``kubernetes_cluster_id`` (or a
  node group's ``cluster_name``) points at its cluster, through module inputs and outputs.

A value unknown until apply becomes Pulumi's unknown sentinel (``readonly.UNKNOWN``), which the rules read as
"not applicable" exactly as they treat a Pulumi preview's unknowns (``wirespeed.rules._props``).

Linking a pool to its cluster: the SNAT capacity and agent rules count a cluster's separate pools. A pool whose
cluster is being created has an unknown ``kubernetes_cluster_id`` in the plan, so the link comes from the
``configuration`` references (followed through ``var.*`` module inputs and ``module.*`` outputs): the pool gets
the cluster's address as a property dependency and, when the cluster's name is known, that name. A known
``kubernetes_cluster_id`` (an ARM id, as in a state) names the cluster itself. Without a reference (a plan
without ``configuration``), a pool is linked to the one cluster of its own module, if there is exactly one;
otherwise its cluster stays unknown and the capacity rule is not applicable to it, as in a Pulumi preview.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from wirespeed.check.readonly import EMPTY, ReadOnlyMapping
from wirespeed.rules import Resource, Violation
from wirespeed.rules._aks import AGENT_POOL, CLUSTER, PUBLIC_IP_PREFIX, arm_segment
from wirespeed.rules._k8s import CONFIG_MAP, DAEMON_SET
from wirespeed.rules.agent import EKS_CLUSTER
from wirespeed.rules.natgw import NAT_GATEWAY
from wirespeed.rules.sku import NODE_GROUP
from wirespeed.rules.tuning import LAUNCH_TEMPLATE
from wirespeed.values import UNKNOWN, at

JSON_FORMAT_DOC = "https://developer.hashicorp.com/terraform/internals/json-format"
AZURERM_DOCS = "https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources"
AWS_DOCS = "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources"
KUBERNETES_DOCS = "https://registry.terraform.io/providers/hashicorp/kubernetes/latest/docs/resources"

# Change Representation: the actions after which the resource exists (a replacement is ["delete", "create"]
# or ["create", "delete"]).
KEPT_ACTIONS = frozenset({"create", "update", "no-op"})
# An instance key in an address: [0] or ["key"] (Terraform escapes quotes inside the key with a backslash).
_INDEX = re.compile(r'\[(?:\d+|"(?:[^"\\]|\\.)*")\]')

Props = dict[str, Any]


def config_address(address: str) -> str:
    """The configuration address of an instance: ``module.a[0].x.y["k"]`` -> ``module.a.x.y``."""
    return _INDEX.sub("", address)


def _join(module: str, address: str) -> str:
    return f"{module}.{address}" if module else address


def _parent(module: str) -> str:
    """``module.a.module.b`` -> ``module.a``; ``module.a`` -> the root ("")."""
    head, _, _ = module.rpartition(".module.")
    return head if module.count("module.") > 1 else ""


# --- values: planned values with the unknowns marked ------------------------------------------------------------


def planned(after: Any, unknown: Any) -> Any:
    """``change.after`` with every value ``after_unknown`` marks replaced by the unknown sentinel."""
    if unknown is True:
        return UNKNOWN
    if isinstance(after, dict):
        marks = unknown if isinstance(unknown, dict) else {}
        merged = {key: planned(value, marks.get(key)) for key, value in after.items()}
        for key, mark in marks.items():
            if key not in merged and mark is not False:
                merged[key] = planned(None, mark)
        return merged
    if isinstance(after, list):
        items = unknown if isinstance(unknown, list) else []
        return [planned(value, items[i] if i < len(items) else None) for i, value in enumerate(after)]
    if after is None and isinstance(unknown, dict | list) and unknown:
        return planned({} if isinstance(unknown, dict) else [None] * len(unknown), unknown)
    return after


def _known_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value != UNKNOWN else None


def _clean(props: Props) -> Props:
    """Absent attributes left out, as a Pulumi resource omits inputs it was not given."""
    cleaned: Props = {}
    for key, value in props.items():
        if isinstance(value, dict):
            value = _clean(value)
            if not value:
                continue
        if value is not None:
            cleaned[key] = value
    return cleaned


def _ids(value: Any) -> Any:
    """A list of resource ids as the ARM shape's ``[{"id": ...}]``."""
    if value == UNKNOWN or not isinstance(value, list):
        return value if value == UNKNOWN else None
    return [{"id": item} for item in value]


# --- azurerm ----------------------------------------------------------------------------------------------------


def arm_cluster(arm_id: Any) -> tuple[str | None, str | None]:
    """``(cluster name, resource group)`` from a ``.../resourceGroups/<rg>/.../managedClusters/<name>`` id."""
    text = _known_text(arm_id)
    if not text:
        return None, None
    return arm_segment(text, "managedClusters"), arm_segment(text, "resourceGroups")


def aks_pool_profile(pool: Any, name: Any = None) -> Any:
    """A ``default_node_pool`` block or a node pool resource as an ARM agent pool profile
    (azurerm kubernetes_cluster ``default_node_pool`` / kubernetes_cluster_node_pool arguments)."""
    if pool == UNKNOWN:
        return UNKNOWN
    autoscale = at(pool, "auto_scaling_enabled")  # azurerm 4.x
    if autoscale is None:
        autoscale = at(pool, "enable_auto_scaling")  # azurerm 3.x
    return _clean(
        {
            "name": at(pool, "name") if name is None else name,
            "vmSize": at(pool, "vm_size"),
            "count": at(pool, "node_count"),
            "enableAutoScaling": autoscale,
            "minCount": at(pool, "min_count"),
            "maxCount": at(pool, "max_count"),
            "osType": at(pool, "os_type"),
            "tags": at(pool, "tags"),  # network-optimised-sku reads the written reason from them
            "upgradeSettings": {"maxSurge": at(pool, "upgrade_settings", "max_surge")},
            "linuxOSConfig": {
                "sysctls": {
                    "netCoreNetdevMaxBacklog": at(
                        pool, "linux_os_config", "sysctl_config", "net_core_netdev_max_backlog"
                    )
                }
            },
        }
    )


def _aks_network(network: Any) -> Any:
    if network == UNKNOWN:
        return UNKNOWN
    if network is None:
        return None
    balancer = at(network, "load_balancer_profile")
    nat = at(network, "nat_gateway_profile")
    return _clean(
        {
            "networkPlugin": at(network, "network_plugin"),
            "outboundType": at(network, "outbound_type"),
            "loadBalancerSku": at(network, "load_balancer_sku"),
            "loadBalancerProfile": UNKNOWN
            if balancer == UNKNOWN
            else {
                "allocatedOutboundPorts": at(balancer, "outbound_ports_allocated"),
                "managedOutboundIPs": {"count": at(balancer, "managed_outbound_ip_count")},
                "outboundIPs": {"publicIPs": _ids(at(balancer, "outbound_ip_address_ids"))},
                "outboundIPPrefixes": {"publicIPPrefixes": _ids(at(balancer, "outbound_ip_prefix_ids"))},
                "idleTimeoutInMinutes": at(balancer, "idle_timeout_in_minutes"),
            },
            "natGatewayProfile": UNKNOWN
            if nat == UNKNOWN
            else {
                "managedOutboundIPProfile": {"count": at(nat, "managed_outbound_ip_count")},
                "idleTimeoutInMinutes": at(nat, "idle_timeout_in_minutes"),
            },
        }
    )


def aks_cluster(values: Any) -> Props:
    """azurerm_kubernetes_cluster (``AZURERM_DOCS``/kubernetes_cluster) as ManagedCluster inputs."""
    default_pool = at(values, "default_node_pool")
    profiles = UNKNOWN if default_pool == UNKNOWN else [aks_pool_profile(default_pool)] if default_pool else None
    return _clean(
        {
            "resourceName": at(values, "name"),
            "resourceGroupName": at(values, "resource_group_name"),
            "location": at(values, "location"),
            "agentPoolProfiles": profiles,
            "networkProfile": _aks_network(at(values, "network_profile")),
        }
    )


def aks_node_pool(values: Any) -> Props:
    """azurerm_kubernetes_cluster_node_pool (``AZURERM_DOCS``/kubernetes_cluster_node_pool) as AgentPool inputs;
    ``resourceName`` (the cluster) from ``kubernetes_cluster_id`` when known (else linked later)."""
    cluster_id = at(values, "kubernetes_cluster_id")
    name, group = arm_cluster(cluster_id)
    props = aks_pool_profile(values, name=at(values, "name"))
    props["agentPoolName"] = props.get("name")
    props["resourceName"] = UNKNOWN if cluster_id == UNKNOWN else name
    props["resourceGroupName"] = group
    return _clean(props)


def public_ip_prefix(values: Any) -> Props:
    """azurerm_public_ip_prefix (``AZURERM_DOCS``/public_ip_prefix): its length and id for the capacity rule."""
    return _clean({"prefixLength": at(values, "prefix_length"), "id": at(values, "id")})


# --- aws --------------------------------------------------------------------------------------------------------


def eks_cluster(values: Any) -> Props:
    """aws_eks_cluster (``AWS_DOCS``/eks_cluster): its name, which node groups point at."""
    return _clean({"name": at(values, "name")})


def eks_node_group(values: Any) -> Props:
    """aws_eks_node_group (``AWS_DOCS``/eks_node_group) as aws.eks.NodeGroup inputs."""
    template = at(values, "launch_template")
    return _clean(
        {
            "clusterName": at(values, "cluster_name"),
            "nodeGroupName": at(values, "node_group_name"),
            "instanceTypes": at(values, "instance_types"),
            "amiType": at(values, "ami_type"),
            "capacityType": at(values, "capacity_type"),
            "tags": at(values, "tags"),
            "launchTemplate": UNKNOWN
            if template == UNKNOWN
            else {"id": at(template, "id"), "name": at(template, "name"), "version": at(template, "version")}
            if template
            else None,
            "scalingConfig": {
                "desiredSize": at(values, "scaling_config", "desired_size"),
                "minSize": at(values, "scaling_config", "min_size"),
                "maxSize": at(values, "scaling_config", "max_size"),
            },
        }
    )


def launch_template(values: Any) -> Props:
    """aws_launch_template (``AWS_DOCS``/launch_template): ``user_data`` is base64, as the EC2 API takes it."""
    return _clean(
        {
            "name": at(values, "name"),
            "instanceType": at(values, "instance_type"),
            "userData": at(values, "user_data"),
            "tags": at(values, "tags"),
        }
    )


def nat_gateway(values: Any) -> Props:
    """aws_nat_gateway (``AWS_DOCS``/nat_gateway): the Elastic IPs the capacity rule counts."""
    return _clean(
        {
            "allocationId": at(values, "allocation_id"),
            "connectivityType": at(values, "connectivity_type"),
            "secondaryAllocationIds": at(values, "secondary_allocation_ids"),
            "secondaryPrivateIpAddressCount": at(values, "secondary_private_ip_address_count"),
            "subnetId": at(values, "subnet_id"),
        }
    )


def named(values: Any) -> Props:
    """A gateway the MTU rule only needs to know exists."""
    return _clean({"name": at(values, "name")})


# --- kubernetes -------------------------------------------------------------------------------------------------


def manifest_type(manifest: Any) -> str | None:
    """The Pulumi token of a Kubernetes object: ``apps/v1`` + ``DaemonSet`` -> ``kubernetes:apps/v1:DaemonSet``
    (the core group's ``v1`` is ``core/v1``, as pulumi-kubernetes names it)."""
    api_version, kind = _known_text(at(manifest, "apiVersion")), _known_text(at(manifest, "kind"))
    if not api_version or not kind:
        return None
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def config_map(values: Any) -> Props:
    """kubernetes_config_map / kubernetes_config_map_v1 (``KUBERNETES_DOCS``/config_map_v1) as a ConfigMap."""
    metadata = at(values, "metadata")
    return _clean(
        {
            "metadata": {"name": at(metadata, "name"), "namespace": at(metadata, "namespace")},
            "data": at(values, "data"),
        }
    )


def _blocks(value: Any, convert: Callable[[Any], Any]) -> Any:
    """A repeated nested block (``container``, ``volume``) converted item by item; unknown stays unknown."""
    if value == UNKNOWN:
        return UNKNOWN
    return [convert(item) for item in value] if isinstance(value, list) and value else None


def _container(container: Any) -> Any:
    capabilities = at(container, "security_context", "capabilities")
    return _clean(
        {
            "name": at(container, "name"),
            "image": at(container, "image"),
            "securityContext": {
                "privileged": at(container, "security_context", "privileged"),
                "capabilities": UNKNOWN
                if capabilities == UNKNOWN
                else {"add": at(capabilities, "add"), "drop": at(capabilities, "drop")},
            },
            "volumeMounts": _blocks(
                _repeated(container, "volume_mount"),
                lambda m: _clean(
                    {"name": at(m, "name"), "mountPath": at(m, "mount_path"), "readOnly": at(m, "read_only")}
                ),
            ),
        }
    )


def _volume(volume: Any) -> Any:
    return _clean({"name": at(volume, "name"), "hostPath": {"path": at(volume, "host_path", "path")}})


def _repeated(block: Any, key: str) -> Any:
    """A repeated nested block inside a single one, whole (``at`` would give its first item)."""
    if block == UNKNOWN:
        return UNKNOWN
    if isinstance(block, list):
        block = block[0] if block else None
    return block.get(key) if isinstance(block, dict) else None


def daemon_set(values: Any) -> Props:
    """kubernetes_daemon_set_v1 / kubernetes_daemonset (``KUBERNETES_DOCS``/daemon_set_v1): the nested blocks
    (``spec.template.spec.container``, ``security_context``, ``volume``) as the DaemonSet object the agent rules
    read (the same fields in the Kubernetes API's names)."""
    metadata = at(values, "metadata")
    pod = at(values, "spec", "template", "spec")
    return _clean(
        {
            "metadata": {
                "name": at(metadata, "name"),
                "namespace": at(metadata, "namespace"),
                "labels": at(metadata, "labels"),
            },
            "spec": {
                "template": {
                    "spec": UNKNOWN
                    if pod == UNKNOWN
                    else {
                        "hostNetwork": at(pod, "host_network"),
                        "hostPID": at(pod, "host_pid"),
                        "hostIPC": at(pod, "host_ipc"),
                        "containers": _blocks(_repeated(pod, "container"), _container),
                        "initContainers": _blocks(_repeated(pod, "init_container"), _container),
                        "volumes": _blocks(_repeated(pod, "volume"), _volume),
                    }
                }
            },
        }
    )


@dataclass(frozen=True)
class Translation:
    token: str
    props: Callable[[Any], Props]
    # Pulumi field names the rules' messages use -> the Terraform attribute, for the reports.
    fields: tuple[tuple[str, str], ...] = ()


_LB = "network_profile.load_balancer_profile"
_SYSCTL = "linux_os_config.sysctl_config.net_core_netdev_max_backlog"
TRANSLATIONS: dict[str, Translation] = {
    "azurerm_kubernetes_cluster": Translation(
        CLUSTER,
        aks_cluster,
        (
            ("allocatedOutboundPorts", f"{_LB}.outbound_ports_allocated"),
            ("managedOutboundIPs.count", f"{_LB}.managed_outbound_ip_count"),
            ("outboundIPs.publicIPs", f"{_LB}.outbound_ip_address_ids"),
            ("outboundIPPrefixes", f"{_LB}.outbound_ip_prefix_ids"),
            ("agentPoolProfiles[0]", "default_node_pool"),
            ("netCoreNetdevMaxBacklog", f"default_node_pool.{_SYSCTL}"),
            ("vmSize", "default_node_pool.vm_size"),
            ("outboundType", "network_profile.outbound_type"),
        ),
    ),
    "azurerm_kubernetes_cluster_node_pool": Translation(
        AGENT_POOL,
        aks_node_pool,
        (("netCoreNetdevMaxBacklog", _SYSCTL), ("vmSize", "vm_size")),
    ),
    "azurerm_public_ip_prefix": Translation(PUBLIC_IP_PREFIX, public_ip_prefix),
    "azurerm_nat_gateway": Translation("azure-native:network:NatGateway", named),
    "azurerm_virtual_network_gateway": Translation("azure-native:network:VirtualNetworkGateway", named),
    "azurerm_virtual_network_peering": Translation("azure-native:network:VirtualNetworkPeering", named),
    "aws_eks_cluster": Translation(EKS_CLUSTER, eks_cluster),
    "aws_eks_node_group": Translation(NODE_GROUP, eks_node_group, (("instanceTypes", "instance_types"),)),
    "aws_launch_template": Translation(
        LAUNCH_TEMPLATE, launch_template, (("userData", "user_data"), ("instanceType", "instance_type"))
    ),
    "aws_nat_gateway": Translation(
        NAT_GATEWAY,
        nat_gateway,
        (("secondaryAllocationIds", "secondary_allocation_ids"), ("allocationId", "allocation_id")),
    ),
    "aws_internet_gateway": Translation("aws:ec2/internetGateway:InternetGateway", named),
    "aws_egress_only_internet_gateway": Translation(
        "aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway", named
    ),
    "aws_vpn_gateway": Translation("aws:ec2/vpnGateway:VpnGateway", named),
    "aws_ec2_transit_gateway": Translation("aws:ec2transitgateway/transitGateway:TransitGateway", named),
    "aws_vpc_peering_connection": Translation("aws:ec2/vpcPeeringConnection:VpcPeeringConnection", named),
    "kubernetes_daemon_set_v1": Translation(DAEMON_SET, daemon_set),
    "kubernetes_daemonset": Translation(DAEMON_SET, daemon_set),
    "kubernetes_config_map": Translation(CONFIG_MAP, config_map),
    "kubernetes_config_map_v1": Translation(CONFIG_MAP, config_map),
}
KUBERNETES_MANIFEST = "kubernetes_manifest"  # KUBERNETES_DOCS/manifest: ``manifest`` is the object itself

# Pools whose cluster is linked through configuration: attribute holding the reference, cluster type, and the
# property the rules link by (``_aks.PoolIndex``: resourceName; ``agent._Pools``: clusterName).
LINKS: dict[str, tuple[str, str, str]] = {
    "azurerm_kubernetes_cluster_node_pool": ("kubernetes_cluster_id", "azurerm_kubernetes_cluster", "resourceName"),
    "aws_eks_node_group": ("cluster_name", "aws_eks_cluster", "clusterName"),
}
CLUSTER_NAMES = {"azurerm_kubernetes_cluster": "resourceName", "aws_eks_cluster": "name"}


def is_read(tf_type: str) -> bool:
    """Whether wirespeed translates this Terraform type (others are counted and dropped, their values unread)."""
    return tf_type in TRANSLATIONS or tf_type in LINKS or tf_type == KUBERNETES_MANIFEST


def translate(tf_type: str, address: str, values: Any) -> Resource:
    """One resource's values as the rules read it; a type wirespeed does not know keeps its Terraform type and
    no properties (counted, then dropped: no rule reads it)."""
    token: str | None = None
    props: Props | None = None
    if tf_type == KUBERNETES_MANIFEST:
        manifest = at(values, "manifest")
        token = manifest_type(manifest)
        props = manifest if token and isinstance(manifest, dict) else None
    elif tf_type in TRANSLATIONS:
        translation = TRANSLATIONS[tf_type]
        token, props = translation.token, translation.props(values)
    if token is None or props is None:
        return Resource(type=tf_type, name=address, urn=address, props=EMPTY)
    resource_id = _known_text(at(values, "id"))
    view = ReadOnlyMapping(props)
    return Resource(type=token, name=address, urn=address, props=view, outputs=view, id=resource_id)


# --- configuration: how pools point at clusters ----------------------------------------------------------------


@dataclass
class Configuration:
    """The references ``configuration`` holds that link pools to clusters, by module path ("" for the root)."""

    # (pool config address, attribute) -> references
    references: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # module path -> input variable -> references in the calling module
    inputs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # module path -> output -> references inside that module
    outputs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    seen: bool = False

    def add_module(self, module: Mapping[str, Any], path: str) -> None:
        """One configuration module (decoded), its resources' links, outputs and calls, recursively."""
        # Lenient: a part of the configuration that is not in the documented shape links nothing (the pool's
        # cluster then stays unknown, as without a reference); only the planned values are judged.
        resources = module.get("resources")
        for resource in resources if isinstance(resources, list) else ():
            if not isinstance(resource, dict):
                continue
            link = LINKS.get(str(resource.get("type")))
            address = resource.get("address")
            if link is None or not isinstance(address, str):
                continue
            refs = _references(_mapping(resource.get("expressions")).get(link[0]))
            self.references[(_join(path, address), link[0])] = refs
        for name, output in _mapping(module.get("outputs")).items():
            if isinstance(output, dict):
                self.outputs.setdefault(path, {})[name] = _references(output.get("expression"))
        for name, call in _mapping(module.get("module_calls")).items():
            if isinstance(call, dict):
                self.add_call(name, call, path)

    def add_call(self, name: str, call: Mapping[str, Any], path: str) -> None:
        child = _join(path, f"module.{name}")
        for variable, expression in _mapping(call.get("expressions")).items():
            self.inputs.setdefault(child, {})[variable] = _references(expression)
        module = call.get("module")
        if isinstance(module, dict):
            self.add_module(module, child)

    def targets(self, reference: str, module: str, wanted: str, depth: int = 0) -> set[str]:
        """Configuration addresses of ``wanted``-type resources a reference made in ``module`` leads to."""
        if depth > 32:  # a reference cycle cannot be valid configuration; stop rather than recurse forever
            return set()
        parts = [_INDEX.sub("", p) for p in reference.split(".")]
        if parts[0] == "var" and len(parts) > 1:
            found: set[str] = set()
            for ref in self.inputs.get(module, {}).get(parts[1], ()):
                found |= self.targets(ref, _parent(module), wanted, depth + 1)
            return found
        if parts[0] == "module" and len(parts) > 2:
            child = _join(module, f"module.{parts[1]}")
            found = set()
            for ref in self.outputs.get(child, {}).get(parts[2], ()):
                found |= self.targets(ref, child, wanted, depth + 1)
            return found
        if parts[0] == wanted and len(parts) > 1:
            return {_join(module, f"{parts[0]}.{parts[1]}")}
        return set()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _references(expression: Any) -> list[str]:
    if not isinstance(expression, dict):
        return []
    refs = expression.get("references")
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


# --- what a document gives: resources now, pools once their clusters are known --------------------------------


@dataclass
class _Pending:
    tf_type: str
    address: str
    module: str
    values: Any
    offset: int


Located = tuple[Resource, int]


class Reader:
    """The translation state of one Terraform document: configuration links, clusters seen, pools waiting for
    both (a pool may come before its cluster, and ``configuration`` after both), and each address's type."""

    def __init__(self) -> None:
        self.configuration = Configuration()
        self.clusters: dict[str, list[tuple[str, str | None]]] = {}  # config address -> [(address, name)]
        self.pending: list[_Pending] = []
        self.types: dict[str, str] = {}  # address -> Terraform type, for translated resources

    def resource(self, tf_type: str, address: str, module: str, values: Any, offset: int) -> Located | None:
        """The resource now, or None when it waits for its cluster (see :meth:`linked`)."""
        if tf_type in CLUSTER_NAMES:
            name = _known_text(at(values, "name"))
            self.clusters.setdefault(config_address(address), []).append((address, name))
        if tf_type in LINKS:
            self.pending.append(_Pending(tf_type, address, config_address(module), values, offset))
            return None
        resource = translate(tf_type, address, values)
        if resource.type != tf_type:
            self.types[address] = tf_type
        return resource, offset

    def linked(self) -> Iterator[Located]:
        """The pools, each linked to the clusters its configuration references (or the one cluster of its module)."""
        for pool in self.pending:
            attribute, cluster_type, prop = LINKS[pool.tf_type]
            resource = translate(pool.tf_type, pool.address, pool.values)
            self.types[pool.address] = pool.tf_type
            clusters = self._clusters_of(pool, attribute, cluster_type)
            if clusters:
                names = {name for _, name in clusters}
                props = dict(resource.props)
                if props.get(prop) in (None, UNKNOWN) and len(names) == 1 and None not in names:
                    props[prop] = names.pop()
                view = ReadOnlyMapping(props)
                resource = replace(
                    resource,
                    props=view,
                    outputs=view,
                    property_dependencies={prop: tuple(address for address, _ in clusters)},
                )
            yield resource, pool.offset
        self.pending = []

    def _clusters_of(self, pool: _Pending, attribute: str, cluster_type: str) -> list[tuple[str, str | None]]:
        own = config_address(pool.address)
        refs = self.configuration.references.get((own, attribute))
        if refs is not None:
            targets: set[str] = set()
            for ref in refs:
                targets |= self.configuration.targets(ref, pool.module, cluster_type)
            return [c for target in sorted(targets) for c in self.clusters.get(target, ())]
        if self.configuration.seen:
            return []  # configured without a reference to a cluster (a literal id or name): the name links it
        prefix = _join(pool.module, f"{cluster_type}.")
        here = [
            c
            for key, found in self.clusters.items()
            if key.startswith(prefix) and "." not in key[len(prefix) :]
            for c in found
        ]
        return here if len(here) == 1 else []

    def adjust(self, violation: Violation) -> Violation:
        """A violation as a Terraform user reads it: the Terraform type, and the attribute names of its fields."""
        tf_type = self.types.get(violation.resource_urn)
        if tf_type is None:
            return violation
        translation = TRANSLATIONS.get(tf_type)
        names = [
            f"{pulumi} is {terraform}"
            for pulumi, terraform in (translation.fields if translation else ())
            if pulumi in violation.message
        ]
        message = violation.message + (f" (In Terraform: {'; '.join(names)}.)" if names else "")
        return replace(violation, resource_type=tf_type, message=message)
