"""What the clouds would answer, invented offline: resource IDs, names, addresses and lookups of the right shape.

Pure (no Pulumi import): :class:`FakeCloud` turns a registration (type token, logical name, inputs) into the
physical ID and the output properties a provider would return, and an invoke (token, args) into its result.
Inputs are echoed as outputs, as providers do, plus the computed properties programs read (``id``, ``name``,
``nodeResourceGroup``, ``ipAddress``, kubeconfigs...). Everything is deterministic: the same program gives
the same answers, so plans can be kept as golden files.

Invented values are recognisable as invented: the all-zero subscription ID, the AWS documentation account
``123456789012``, and public addresses from the RFC 5737 documentation ranges, never routable ones.
"""

from __future__ import annotations

import base64
import re
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
TENANT_ID = "00000000-0000-0000-0000-000000000001"
CLIENT_ID = "00000000-0000-0000-0000-000000000002"
# The account ID AWS's own documentation uses in examples.
AWS_ACCOUNT_ID = "123456789012"
DEFAULT_AZURE_LOCATION = "eastus"
DEFAULT_AWS_REGION = "us-east-1"
# RFC 5737 section 3: TEST-NET-1, -2 and -3 are for documentation and never routed.
DOCUMENTATION_NETWORKS = ("192.0.2", "198.51.100", "203.0.113")
# What a freshly created AKS cluster reports before anyone upgrades it (any supported version would do).
FAKE_KUBERNETES_VERSION = "1.33.2"
FAKE_NODE_IMAGE_VERSION = "AKSUbuntu-2204gen2containerd-202511.07.0"

# ARM provider namespace of each azure-native module that does not simply capitalise.
_ARM_NAMESPACES = {
    "containerservice": "Microsoft.ContainerService",
    "network": "Microsoft.Network",
    "resources": "Microsoft.Resources",
    "insights": "Microsoft.Insights",
    "monitor": "Microsoft.Insights",
    "managedidentity": "Microsoft.ManagedIdentity",
    "authorization": "Microsoft.Authorization",
    "compute": "Microsoft.Compute",
    "containerregistry": "Microsoft.ContainerRegistry",
    "keyvault": "Microsoft.KeyVault",
    "storage": "Microsoft.Storage",
    "operationalinsights": "Microsoft.OperationalInsights",
}

# Resources whose ARM ID nests under a parent: (parent path template, child segment, name input).
_AZURE_CHILDREN: dict[tuple[str, str], tuple[str, str, str]] = {
    ("containerservice", "AgentPool"): (
        "providers/Microsoft.ContainerService/managedClusters/{resourceName}",
        "agentPools",
        "agentPoolName",
    ),
    ("network", "Subnet"): (
        "providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}",
        "subnets",
        "subnetName",
    ),
}

# Kinds pulumi-kubernetes does not put in a namespace.
_CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "PriorityClass",
        "StorageClass",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "PersistentVolume",
        "Node",
    }
)


@dataclass(frozen=True)
class TypeToken:
    """``package:module[/version]:Resource`` split into its parts (versioned azure-native tokens included)."""

    package: str
    module: str
    version: str
    resource: str

    @classmethod
    def parse(cls, token: str) -> TypeToken:
        package, _, rest = token.partition(":")
        module_part, _, resource = rest.rpartition(":")
        module, _, version = module_part.partition("/")
        return cls(package, module, version, resource)


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def _plural(name: str) -> str:
    if name.endswith("y") and not name.endswith(("ay", "ey", "oy", "uy")):
        return name[:-1] + "ies"
    if name.endswith(("s", "x")):
        return name + "es"
    return name + "s"


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _hex(seed: str, length: int) -> str:
    """A stable pseudo-random hex string: the same seed always gives the same ID."""
    out = ""
    counter = 0
    while len(out) < length:
        out += f"{zlib.crc32(f'{seed}#{counter}'.encode()):08x}"
        counter += 1
    return out[:length]


def _uuid(seed: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"wirespeed-plan:{seed}"))


def fake_kubeconfig(cluster: str, server: str) -> str:
    """A kubeconfig with the shape AKS returns; its credentials are placeholders that authenticate nowhere."""
    ca = base64.b64encode(f"fake CA of {cluster}".encode()).decode()
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {cluster}\n"
        "  cluster:\n"
        f"    certificate-authority-data: {ca}\n"
        f"    server: {server}\n"
        "contexts:\n"
        f"- name: {cluster}\n"
        "  context:\n"
        f"    cluster: {cluster}\n"
        f"    user: clusterUser_{cluster}\n"
        f"current-context: {cluster}\n"
        "users:\n"
        f"- name: clusterUser_{cluster}\n"
        "  user:\n"
        "    token: fake-token-for-offline-plans\n"
    )


@dataclass
class FakeCloud:
    """Answers registrations and invokes; call it from one thread (the runner serialises its RPCs)."""

    azure_location: str = DEFAULT_AZURE_LOCATION
    aws_region: str = DEFAULT_AWS_REGION
    _addresses: dict[str, str] = field(default_factory=dict)
    _unmocked_invokes: list[str] = field(default_factory=list)

    @property
    def unmocked_invokes(self) -> list[str]:
        """Invoke tokens answered by echoing their arguments (no realistic fake for them)."""
        return list(self._unmocked_invokes)

    # ---------------------------------------------------------------- addresses
    def public_ip(self, key: str) -> str:
        """A documentation address chosen by a stable hash of ``key`` (the resource's type and name).

        Registration order varies between runs (independent resources race), so a counter would hand the
        same resource different addresses in different runs; a hash does not. The 762 addresses of the three
        RFC 5737 ranges are one space; a collision takes the next free address.
        """
        space = len(DOCUMENTATION_NETWORKS) * 254
        if len(self._addresses) >= space:
            raise RuntimeError("the plan created more than 762 public IP addresses (RFC 5737 has no more)")
        if key in self._addresses:
            return self._addresses[key]
        taken = set(self._addresses.values())
        index = zlib.crc32(key.encode()) % space
        while True:
            network, host = divmod(index, 254)
            address = f"{DOCUMENTATION_NETWORKS[network]}.{host + 1}"
            if address not in taken:
                self._addresses[key] = address
                return address
            index = (index + 1) % space

    # ---------------------------------------------------------------- resources
    def new_resource(
        self, token: str, name: str, inputs: Mapping[str, Any], custom: bool
    ) -> tuple[str, dict[str, Any]]:
        """The physical ID and output properties for one registration."""
        if not custom:
            return "", {}
        t = TypeToken.parse(token)
        if t.package == "pulumi" and t.module == "providers":
            return _uuid(f"provider:{token}:{name}"), dict(inputs)
        if t.package == "azure-native":
            return self._azure(t, name, dict(inputs))
        if t.package == "kubernetes":
            return self._kubernetes(t, name, dict(inputs))
        if t.package == "aws":
            return self._aws(t, name, dict(inputs))
        return f"{name}-id", dict(inputs)

    def _azure_name(self, t: TypeToken, logical: str, inputs: Mapping[str, Any]) -> str:
        """The Azure name: the explicit name input, else the logical name (azure-native would add a suffix)."""
        child = _AZURE_CHILDREN.get((t.module, t.resource))
        candidates = [child[2]] if child else []
        candidates += [f"{_lower_first(t.resource)}Name", "resourceName"]
        if t.resource == "ResourceGroup":
            candidates.insert(0, "resourceGroupName")
        for key in candidates:
            value = inputs.get(key)
            if isinstance(value, str) and value:
                return value
        named = [k for k in inputs if k.endswith("Name") and k != "resourceGroupName" and isinstance(inputs[k], str)]
        return str(inputs[sorted(named)[0]]) if len(named) == 1 else logical

    def azure_id(self, token: str, logical: str, inputs: Mapping[str, Any]) -> str:
        """An ARM ID of the right shape for the resource the token names."""
        t = TypeToken.parse(token)
        name = self._azure_name(t, logical, inputs)
        subscription = f"/subscriptions/{SUBSCRIPTION_ID}"
        if t.resource == "ResourceGroup":
            return f"{subscription}/resourceGroups/{name}"
        rg = inputs.get("resourceGroupName") or "rg"
        if t.module == "authorization" and "scope" in inputs:
            base = str(inputs["scope"])
        else:
            base = f"{subscription}/resourceGroups/{rg}"
        child = _AZURE_CHILDREN.get((t.module, t.resource))
        if child is not None:
            parent_path, segment, _ = child
            try:
                parent = parent_path.format(**{k: v for k, v in inputs.items() if isinstance(v, str)})
            except KeyError:
                parent = parent_path.format_map({k: "unknown" for k in re.findall(r"{(\w+)}", parent_path)})
            return f"{base}/{parent}/{segment}/{name}"
        namespace = _ARM_NAMESPACES.get(t.module, f"Microsoft.{t.module.capitalize()}")
        return f"{base}/providers/{namespace}/{_plural(_lower_first(t.resource))}/{name}"

    def _azure(self, t: TypeToken, logical: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        token = f"{t.package}:{t.module}:{t.resource}"
        rid = self.azure_id(token, logical, inputs)
        name = self._azure_name(t, logical, inputs)
        out = dict(inputs)
        out.update(id=rid, name=name)
        namespace = _ARM_NAMESPACES.get(t.module, f"Microsoft.{t.module.capitalize()}")
        out.setdefault("type", f"{namespace}/{_plural(_lower_first(t.resource))}")
        if "location" in inputs or t.resource in ("ManagedCluster", "PublicIPAddress", "NatGateway", "ResourceGroup"):
            out.setdefault("location", self.azure_location)
        if t.resource != "ResourceGroup":
            out.setdefault("provisioningState", "Succeeded")
        if (t.module, t.resource) == ("containerservice", "ManagedCluster"):
            out.update(self._managed_cluster_outputs(name, out))
        elif (t.module, t.resource) == ("containerservice", "AgentPool"):
            out.setdefault("currentOrchestratorVersion", out.get("orchestratorVersion") or FAKE_KUBERNETES_VERSION)
            out.setdefault("nodeImageVersion", FAKE_NODE_IMAGE_VERSION)
        elif (t.module, t.resource) == ("network", "PublicIPAddress"):
            out.setdefault("ipAddress", self.public_ip(f"{token}:{logical}"))
            out.setdefault("resourceGuid", _uuid(rid))
        elif (t.module, t.resource) in (("network", "NatGateway"), ("network", "PublicIPPrefix")):
            out.setdefault("resourceGuid", _uuid(rid))
            if t.resource == "PublicIPPrefix":
                length = int(inputs.get("prefixLength") or 31)
                out.setdefault("ipPrefix", f"{self.public_ip(f'{token}:{logical}')}/{length}")
        elif (t.module, t.resource) == ("managedidentity", "UserAssignedIdentity"):
            out.update(principalId=_uuid(f"principal:{rid}"), clientId=_uuid(f"client:{rid}"), tenantId=TENANT_ID)
        return rid, out

    def _managed_cluster_outputs(self, name: str, state: Mapping[str, Any]) -> dict[str, Any]:
        location = str(state.get("location") or self.azure_location)
        rg = str(state.get("resourceGroupName") or "rg")
        node_rg = str(state.get("nodeResourceGroup") or f"MC_{rg}_{name}_{location}")
        dns_prefix = str(state.get("dnsPrefix") or name)
        fqdn = f"{dns_prefix}-{_hex(name, 8)}.hcp.{location}.azmk8s.io"
        out: dict[str, Any] = {
            "nodeResourceGroup": node_rg,
            "fqdn": fqdn,
            "azurePortalFQDN": f"{dns_prefix}-{_hex(name, 8)}.portal.hcp.{location}.azmk8s.io",
            "kubernetesVersion": state.get("kubernetesVersion") or FAKE_KUBERNETES_VERSION,
            "currentKubernetesVersion": state.get("kubernetesVersion") or FAKE_KUBERNETES_VERSION,
            "powerState": {"code": "Running"},
            "identityProfile": {
                "kubeletidentity": {
                    "resourceId": f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{node_rg}/providers/"
                    f"Microsoft.ManagedIdentity/userAssignedIdentities/{name}-agentpool",
                    "clientId": _uuid(f"kubelet-client:{name}"),
                    "objectId": _uuid(f"kubelet-object:{name}"),
                }
            },
        }
        if isinstance(state.get("identity"), Mapping) and state["identity"].get("type") == "SystemAssigned":
            out["identity"] = {
                **state["identity"],
                "principalId": _uuid(f"principal:{name}"),
                "tenantId": TENANT_ID,
            }
        pools = state.get("agentPoolProfiles")
        if isinstance(pools, list):
            out["agentPoolProfiles"] = [
                {**p, "provisioningState": "Succeeded", "nodeImageVersion": FAKE_NODE_IMAGE_VERSION}
                if isinstance(p, Mapping)
                else p
                for p in pools
            ]
        network = state.get("networkProfile")
        if isinstance(network, Mapping):
            out["networkProfile"] = self._network_profile_outputs(name, node_rg, network)
        return out

    def _effective_ips(self, cluster: str, node_rg: str, count: int) -> list[dict[str, str]]:
        group = f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{node_rg}"
        base = f"{group}/providers/Microsoft.Network/publicIPAddresses"
        return [{"id": f"{base}/{_uuid(f'{cluster}:outbound:{i}')}"} for i in range(count)]

    def _network_profile_outputs(self, cluster: str, node_rg: str, network: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(network)
        lb = network.get("loadBalancerProfile")
        if isinstance(lb, Mapping):
            lb_out = dict(lb)
            given = lb.get("outboundIPs", {}).get("publicIPs") if isinstance(lb.get("outboundIPs"), Mapping) else None
            if isinstance(given, list) and given:
                lb_out["effectiveOutboundIPs"] = [{"id": p.get("id")} for p in given if isinstance(p, Mapping)]
            else:
                managed = lb.get("managedOutboundIPs")
                count = int(managed.get("count", 1)) if isinstance(managed, Mapping) else 1
                lb_out["effectiveOutboundIPs"] = self._effective_ips(cluster, node_rg, count)
            out["loadBalancerProfile"] = lb_out
        nat = network.get("natGatewayProfile")
        if isinstance(nat, Mapping):
            nat_out = dict(nat)
            managed = nat.get("managedOutboundIPProfile")
            count = int(managed.get("count", 1)) if isinstance(managed, Mapping) else 1
            nat_out["effectiveOutboundIPs"] = self._effective_ips(cluster, node_rg, count)
            out["natGatewayProfile"] = nat_out
        return out

    def _kubernetes(self, t: TypeToken, logical: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        out = dict(inputs)
        metadata = dict(inputs.get("metadata") or {})
        # pulumi-kubernetes auto-names objects without metadata.name: the logical name plus a random suffix.
        metadata.setdefault("name", f"{logical}-{_hex(logical, 8)}")
        namespaced = t.resource not in _CLUSTER_SCOPED_KINDS and not t.resource.endswith("List")
        if namespaced:
            metadata.setdefault("namespace", "default")
        metadata.setdefault("uid", _uuid(f"k8s:{t.resource}:{metadata.get('namespace', '')}/{metadata['name']}"))
        out["metadata"] = metadata
        rid = f"{metadata['namespace']}/{metadata['name']}" if namespaced else str(metadata["name"])
        return rid, out

    def _aws(self, t: TypeToken, logical: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        out = dict(inputs)
        region = str(inputs.get("region") or self.aws_region)
        name = str(inputs.get("name") or inputs.get("clusterName") or f"{logical}-{_hex(logical, 7)}")
        service = t.module.split("/")[0]
        kind = _kebab(t.resource)
        if service == "ec2":
            # EC2 IDs are a type prefix and 17 hex digits (lt-0abc..., nat-0abc..., vpc-0abc...).
            prefixes = {
                "LaunchTemplate": "lt",
                "NatGateway": "nat",
                "Vpc": "vpc",
                "Subnet": "subnet",
                "Eip": "eipalloc",
                "SecurityGroup": "sg",
                "InternetGateway": "igw",
                "RouteTable": "rtb",
            }
            rid = f"{prefixes.get(t.resource, kind)}-0{_hex(logical + t.resource, 16)}"
            out.setdefault("arn", f"arn:aws:ec2:{region}:{AWS_ACCOUNT_ID}:{kind}/{rid}")
            if t.resource in ("Eip", "NatGateway"):
                out.setdefault("publicIp", self.public_ip(f"aws:{t.resource}:{logical}"))
            if t.resource == "Eip":
                out.setdefault("allocationId", rid)
            if t.resource == "LaunchTemplate":
                out.setdefault("latestVersion", 1)
                out.setdefault("defaultVersion", 1)
        elif service == "iam":
            rid = name
            out.setdefault("arn", f"arn:aws:iam::{AWS_ACCOUNT_ID}:{kind}/{name}")
            out.setdefault("name", name)
        elif (service, t.resource) == ("eks", "Cluster"):
            rid = name
            out.update(
                name=name,
                arn=f"arn:aws:eks:{region}:{AWS_ACCOUNT_ID}:cluster/{name}",
                endpoint=f"https://{_hex(name, 32).upper()}.gr7.{region}.eks.amazonaws.com",
                certificateAuthority={"data": base64.b64encode(f"fake CA of {name}".encode()).decode()},
                status="ACTIVE",
            )
        elif (service, t.resource) == ("eks", "NodeGroup"):
            cluster = str(inputs.get("clusterName") or "cluster")
            group = str(inputs.get("nodeGroupName") or f"{logical}-{_hex(logical, 7)}")
            rid = f"{cluster}:{group}"
            out.update(
                nodeGroupName=group,
                arn=f"arn:aws:eks:{region}:{AWS_ACCOUNT_ID}:nodegroup/{cluster}/{group}/{_uuid(rid)}",
                status="ACTIVE",
            )
        else:
            rid = name
            out.setdefault("arn", f"arn:aws:{service}:{region}:{AWS_ACCOUNT_ID}:{kind}/{name}")
        out.setdefault("id", rid)
        out.setdefault("tagsAll", inputs.get("tags") or {})
        return rid, out

    # ---------------------------------------------------------------- invokes
    def call(self, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The result of a provider function (lookup or credentials)."""
        t = TypeToken.parse(token)
        fn = t.resource
        if t.package == "azure-native":
            if fn in ("listManagedClusterUserCredentials", "listManagedClusterAdminCredentials"):
                cluster = str(args.get("resourceName") or "cluster")
                rg = str(args.get("resourceGroupName") or "rg")
                server = f"https://{cluster}-{_hex(cluster, 8)}.hcp.{self.azure_location}.azmk8s.io:443"
                kubeconfig = base64.b64encode(fake_kubeconfig(cluster, server).encode()).decode()
                role = "clusterAdmin" if "Admin" in fn else "clusterUser"
                return {"kubeconfigs": [{"name": role, "value": kubeconfig}], "resourceGroupName": rg}
            if fn == "getManagedCluster":
                return self.existing_managed_cluster(
                    str(args.get("resourceGroupName") or "rg"), str(args.get("resourceName") or "cluster")
                )
            if fn == "getResourceGroup":
                rg = str(args.get("resourceGroupName") or "rg")
                return {
                    "id": f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{rg}",
                    "name": rg,
                    "location": self.azure_location,
                    "properties": {"provisioningState": "Succeeded"},
                }
            if fn == "getClientConfig":
                return {
                    "subscriptionId": SUBSCRIPTION_ID,
                    "tenantId": TENANT_ID,
                    "clientId": CLIENT_ID,
                    "objectId": _uuid("client-object"),
                }
            if fn.startswith("get"):
                resource = fn.removeprefix("get")
                fake_token = f"azure-native:{t.module}:{resource}"
                _, state = self._azure(TypeToken.parse(fake_token), resource.lower(), dict(args))
                return state
        if t.package == "aws":
            if fn == "getAvailabilityZones":
                names = [f"{self.aws_region}{z}" for z in "abc"]
                return {"names": names, "zoneIds": [f"use1-az{i}" for i in (1, 2, 4)], "id": self.aws_region}
            if fn == "getRegion":
                return {"name": self.aws_region, "region": self.aws_region, "id": self.aws_region}
            if fn == "getCallerIdentity":
                return {
                    "accountId": AWS_ACCOUNT_ID,
                    "arn": f"arn:aws:iam::{AWS_ACCOUNT_ID}:user/plan",
                    "userId": "AIDAPLANFAKEUSER",
                    "id": AWS_ACCOUNT_ID,
                }
            if fn == "getPartition":
                return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}
        self._unmocked_invokes.append(token)
        return dict(args)

    def existing_managed_cluster(self, rg: str, name: str) -> dict[str, Any]:
        """A cluster that already exists (looked up by name): one system pool, Standard LB outbound, 1 IP."""
        state: dict[str, Any] = {
            "resourceGroupName": rg,
            "resourceName": name,
            "location": self.azure_location,
            "dnsPrefix": name,
            "agentPoolProfiles": [
                {
                    "name": "system",
                    "mode": "System",
                    "vmSize": "Standard_D4ds_v5",
                    "count": 3,
                    "osType": "Linux",
                    "osSKU": "Ubuntu",
                    "type": "VirtualMachineScaleSets",
                }
            ],
            "networkProfile": {
                "networkPlugin": "azure",
                "outboundType": "loadBalancer",
                "loadBalancerSku": "standard",
                "loadBalancerProfile": {"managedOutboundIPs": {"count": 1}},
            },
        }
        _, out = self._azure(TypeToken.parse("azure-native:containerservice:ManagedCluster"), name, state)
        return out
