"""Pulumi's own mocks for the component tests (AWS components, NodeTuning): no cloud, no Pulumi CLI (the engine
is what is mocked).

What is real: the pulumi, pulumi-aws and pulumi-kubernetes SDKs serialise every resource exactly as for
`pulumi up`; the monitor records what reaches the engine (type, name, parent, dependencies, provider, inputs in
engine camelCase, registered outputs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc


@dataclass
class Registration:
    type: str
    name: str
    urn: str
    parent: str
    dependencies: list[str]
    provider: str
    inputs: dict[str, Any]


@dataclass
class Recorder(pulumi.runtime.Mocks):
    registered: list[Registration] = field(default_factory=list)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What AWS assigns a regional NAT gateway in automatic mode (its regionalNatGatewayAddresses): the cloud's
    # choice, so each test that needs it says what AWS answered.
    regional_nat_addresses: list[dict[str, Any]] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == "aws:ec2/launchTemplate:LaunchTemplate":
            outputs["latestVersion"] = 1
        if args.typ == "aws:eks/nodeGroup:NodeGroup":
            outputs["nodeGroupName"] = args.name
        if args.typ == "aws:ec2/eip:Eip":
            outputs["publicIp"] = f"ip-of-{args.name}"
            outputs["allocationId"] = f"eipalloc-{args.name}"
        if args.typ == "aws:ec2/natGateway:NatGateway" and args.inputs.get("availabilityMode") == "regional":
            outputs["regionalNatGatewayAddresses"] = self.regional_nat_addresses
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {}

    def of_type(self, token: str) -> list[Registration]:
        return [r for r in self.registered if r.type == token]

    def one(self, token: str) -> Registration:
        (found,) = self.of_type(token)
        return found


class RecordingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, recorder: Recorder):
        super().__init__(recorder)
        self.recorder = recorder

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.recorder.registered.append(
                Registration(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent,
                    dependencies=list(request.dependencies),
                    provider=request.provider,
                    inputs=rpc.deserialize_properties(request.object),
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802
        self.recorder.outputs[request.urn] = rpc.deserialize_properties(request.outputs)
        return super().RegisterResourceOutputs(request)


@pytest.fixture
def engine() -> Iterator[Recorder]:
    # A fresh event loop per test: the SDK's runtime binds to the loop it first sees (pulumi/pulumi#24338).
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    recorder = Recorder()
    pulumi.runtime.set_mocks(
        recorder, project="wirespeed", stack="test", preview=False, monitor=RecordingMonitor(recorder)
    )
    yield recorder
    loop.close()
    asyncio.set_event_loop(None)


def resolve(output: pulumi.Output[Any]) -> Any:
    """Wait for an Output under the mocks (every registration has been answered by then)."""
    result: list[Any] = []

    @pulumi.runtime.test
    def wait() -> pulumi.Output[None]:
        return output.apply(result.append)

    wait()
    return result[0]
