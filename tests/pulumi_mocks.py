"""Run Pulumi code under the SDK's own mocks (no cloud, no CLI) and record what registers.

Mocks stand in only for what cannot exist here: Azure's and Kubernetes' answers. They echo the inputs and add
the outputs the real providers compute (IDs, the auto-generated cluster name, the node resource group, the
public IP address, the user kubeconfig), so outputs resolve as they would under `pulumi up`.

Each call of :func:`run_under_mocks` uses a fresh asyncio event loop (pulumi/pulumi#24338) and fresh mocks.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: mock
  cluster: {server: "https://mock-aks.hcp.westeurope.azmk8s.io:443"}
contexts:
- name: mock
  context: {cluster: mock, user: clusterUser}
current-context: mock
users:
- name: clusterUser
  user: {token: mock-token}
"""


def _rg(inputs: dict[str, Any]) -> str:
    return str(inputs.get("resourceGroupName") or "rg")


@dataclass
class Registration:
    typ: str
    name: str
    inputs: dict[str, Any]
    urn: str = ""
    parent: str = ""
    custom: bool = True
    provider: str = ""


class AzureMocks(pulumi.runtime.Mocks):
    """Echo inputs and add what Azure computes; answer the invokes the components and examples use."""

    def __init__(self, existing_cluster: dict[str, Any] | None = None) -> None:
        self.registrations: list[Registration] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.existing_cluster = existing_cluster or {}

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        self.registrations.append(
            Registration(args.typ, args.name, dict(args.inputs), custom=bool(args.custom), provider=args.provider or "")
        )
        outputs = dict(args.inputs)
        rg = _rg(args.inputs)
        prefix = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}/providers"
        if args.typ == "azure-native:containerservice:ManagedCluster":
            name = str(args.inputs.get("resourceName") or f"{args.name}a1b2c3")
            outputs.update(
                name=name,
                nodeResourceGroup=args.inputs.get("nodeResourceGroup")
                or f"MC_{rg}_{name}_{args.inputs.get('location', 'westeurope')}",
                fqdn=f"{name}.hcp.azmk8s.io",
            )
            return f"{prefix}/Microsoft.ContainerService/managedClusters/{name}", outputs
        if args.typ == "azure-native:containerservice:AgentPool":
            cluster = args.inputs.get("resourceName", "cluster")
            pool = args.inputs.get("agentPoolName", args.name)
            outputs["name"] = pool
            return f"{prefix}/Microsoft.ContainerService/managedClusters/{cluster}/agentPools/{pool}", outputs
        if args.typ == "azure-native:network:PublicIPAddress":
            index = sum(r.typ == args.typ for r in self.registrations)
            outputs.update(name=args.name, ipAddress=f"20.0.0.{index}")
            return f"{prefix}/Microsoft.Network/publicIPAddresses/{args.name}", outputs
        if args.typ == "azure-native:resources:ResourceGroup":
            name = str(args.inputs.get("resourceGroupName") or f"{args.name}a1b2c3")
            outputs["name"] = name
            return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{name}", outputs
        if args.typ == "azure-native:monitor:MetricAlert":
            return f"{prefix}/Microsoft.Insights/metricAlerts/{args.name}", outputs
        return f"{args.name}-id", outputs

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict[str, Any]:
        self.calls.append((args.token, dict(args.args)))
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            value = base64.b64encode(KUBECONFIG.encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
        if args.token == "azure-native:containerservice:getManagedCluster":
            name = args.args.get("resourceName", "cluster")
            rg = _rg(args.args)
            found = {
                "id": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}/providers/"
                f"Microsoft.ContainerService/managedClusters/{name}",
                "name": name,
                "location": "westeurope",
                "nodeResourceGroup": f"MC_{rg}_{name}_westeurope",
                "kubernetesVersion": "1.33.2",
            }
            found.update(self.existing_cluster)
            return found
        return {}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The SDK's mock monitor, also recording each resource's parent and the keys of its registered outputs."""

    def __init__(self, mocks: AzureMocks) -> None:
        super().__init__(mocks)
        self.parents: dict[str, str] = {}
        self.output_keys: dict[str, set[str]] = {}
        self.urns: list[tuple[str, str, str]] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        self.parents[response.urn] = request.parent
        self.urns.append((request.type, request.name, response.urn))
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802
        self.output_keys[request.urn] = set(request.outputs.keys()) if request.HasField("outputs") else set()
        return super().RegisterResourceOutputs(request)


@dataclass
class Recording:
    mocks: AzureMocks
    monitor: RecordingMonitor
    value: Any = None
    resolved: dict[str, Any] = field(default_factory=dict)

    def of_type(self, typ: str) -> list[Registration]:
        return [r for r in self.mocks.registrations if r.typ == typ]

    def one(self, typ: str) -> Registration:
        found = self.of_type(typ)
        assert len(found) == 1, f"expected one {typ}, got {[r.name for r in found]}"
        return found[0]

    def urn(self, typ: str, name: str) -> str:
        return next(u for t, n, u in self.monitor.urns if t == typ and n == name)

    def parent_of(self, typ: str, name: str) -> str:
        return self.monitor.parents[self.urn(typ, name)]

    def types(self) -> list[str]:
        return [r.typ for r in self.mocks.registrations]


def run_under_mocks(
    build: Callable[[], Any],
    *,
    mocks: AzureMocks | None = None,
    resolve: Callable[[Any], dict[str, pulumi.Output[Any]]] | None = None,
) -> Recording:
    """Run ``build`` as a Pulumi program under mocks, in a fresh event loop; resolve the outputs asked for."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    mocks = mocks or AzureMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project="wirespeed", stack="test", preview=False, monitor=monitor)
    recording = Recording(mocks, monitor)

    @pulumi.runtime.test
    def program() -> pulumi.Output[Any]:
        recording.value = build()
        wanted = resolve(recording.value) if resolve else {}
        keys = list(wanted)
        values = pulumi.Output.all(*wanted.values())
        return values.apply(lambda vs: recording.resolved.update(zip(keys, vs, strict=True)))

    try:
        program()
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    return recording


def unsecret(value: Any) -> Any:
    return json.loads(json.dumps(value))
