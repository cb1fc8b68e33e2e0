"""aws resources as the pulumi-aws inputs the rules read (``AWS_DOCS``/<type>)."""

from __future__ import annotations

from typing import Any

from wirespeed.check.terraform.blocks import Props, blocks, clean, repeated
from wirespeed.values import UNKNOWN, at

AWS_DOCS = "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources"


def eks_cluster(values: Any) -> Props:
    """aws_eks_cluster (``AWS_DOCS``/eks_cluster): its name, which node groups point at."""
    return clean({"name": at(values, "name")})


def eks_node_group(values: Any) -> Props:
    """aws_eks_node_group (``AWS_DOCS``/eks_node_group) as aws.eks.NodeGroup inputs."""
    template = at(values, "launch_template")
    return clean(
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
    return clean(
        {
            "name": at(values, "name"),
            "instanceType": at(values, "instance_type"),
            "userData": at(values, "user_data"),
            "tags": at(values, "tags"),
        }
    )


def _zone_address(block: Any) -> Any:
    """One ``availability_zone_address`` block (AWS provider >= 6.24.0) as pulumi-aws's
    NatGatewayAvailabilityZoneAddress."""
    if block == UNKNOWN:
        return UNKNOWN
    return clean(
        {
            "allocationIds": at(block, "allocation_ids"),
            "availabilityZone": at(block, "availability_zone"),
            "availabilityZoneId": at(block, "availability_zone_id"),
        }
    )


def _repeated(values: Any, key: str) -> Any:
    """A repeated top-level block whole (``at`` gives a block's first item)."""
    if values == UNKNOWN:
        return UNKNOWN
    return values.get(key) if isinstance(values, dict) else None


def nat_gateway(values: Any) -> Props:
    """aws_nat_gateway (``AWS_DOCS``/nat_gateway): the Elastic IPs the capacity and quota rules count. A zonal
    gateway's are ``allocation_id`` + ``secondary_allocation_ids``; a regional one's (``availability_mode =
    "regional"``, provider >= 6.24.0) are per AZ in repeated ``availability_zone_address`` blocks, or none in
    automatic mode. Plans of provider 5.x have no such attributes: their gateways are zonal."""
    return clean(
        {
            "allocationId": at(values, "allocation_id"),
            "availabilityMode": at(values, "availability_mode"),
            "availabilityZoneAddresses": blocks(_repeated(values, "availability_zone_address"), _zone_address),
            "connectivityType": at(values, "connectivity_type"),
            "secondaryAllocationIds": at(values, "secondary_allocation_ids"),
            "secondaryPrivateIpAddressCount": at(values, "secondary_private_ip_address_count"),
            "subnetId": at(values, "subnet_id"),
            "vpcId": at(values, "vpc_id"),
        }
    )


def launch_configuration(values: Any) -> Props:
    """aws_launch_configuration (``AWS_DOCS``/launch_configuration): ``user_data`` is plain text (``user_data_base64``
    the base64 form; read_user_data takes either)."""
    user_data = at(values, "user_data")
    return clean(
        {
            "name": at(values, "name"),
            "instanceType": at(values, "instance_type"),
            "userData": user_data if user_data is not None else at(values, "user_data_base64"),
        }
    )


def _tags(values: Any) -> Any:
    """The group's tags as pulumi-aws's ``[{key, value, propagateAtLaunch}]``: repeated ``tag`` blocks, or the list of
    maps ``tags`` of AWS provider < 5."""
    found = []
    for key in ("tag", "tags"):
        items = _repeated(values, key)
        if items == UNKNOWN:
            return UNKNOWN
        for item in items if isinstance(items, list) else ():
            if item == UNKNOWN:
                return UNKNOWN
            if isinstance(item, dict):
                found.append(clean({"key": item.get("key"), "value": item.get("value")}))
    return found or None


def _mixed_instances(template: Any) -> Any:
    """``mixed_instances_policy.launch_template``'s ``override`` blocks as pulumi-aws's
    ``mixedInstancesPolicy.launchTemplate.overrides``."""
    if template == UNKNOWN:
        return UNKNOWN
    overrides = blocks(repeated(template, "override"), lambda o: clean({"instanceType": at(o, "instance_type")}))
    return {"launchTemplate": {"overrides": overrides}} if overrides else None


def autoscaling_group(values: Any) -> Props:
    """aws_autoscaling_group (``AWS_DOCS``/autoscaling_group) as aws.autoscaling.Group inputs: self-managed nodes,
    joined to their EKS cluster by a ``kubernetes.io/cluster/<name>`` tag or by reference."""
    template = at(values, "launch_template")
    return clean(
        {
            "name": at(values, "name"),
            "launchConfiguration": at(values, "launch_configuration"),
            "launchTemplate": UNKNOWN
            if template == UNKNOWN
            else {"id": at(template, "id"), "name": at(template, "name"), "version": at(template, "version")}
            if template
            else None,
            "mixedInstancesPolicy": _mixed_instances(at(values, "mixed_instances_policy", "launch_template")),
            "minSize": at(values, "min_size"),
            "maxSize": at(values, "max_size"),
            "desiredCapacity": at(values, "desired_capacity"),
            "tags": _tags(values),
        }
    )
