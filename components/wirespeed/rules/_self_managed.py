"""Self-managed EKS nodes: the auto-scaling groups that run them and how they name their cluster."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wirespeed.values import NotKnown, elements, get, text

# Self-managed EKS nodes: an auto-scaling group (Terraform aws_autoscaling_group; pulumi-eks NodeGroupV2 and
# eks:index:Cluster's default node group since v2), or the CloudFormation stack that holds one (pulumi-eks v1's
# NodeGroup: its templateBody's AWS::AutoScaling::AutoScalingGroup), both in tests/fixtures/real/pulumi-eks-*.
AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
CLOUDFORMATION_STACK = "aws:cloudformation/stack:Stack"
CFN_AUTOSCALING_GROUP = "AWS::AutoScaling::AutoScalingGroup"
# The tag a self-managed node's group carries to join its cluster, kubernetes.io/cluster/<name> = owned (as
# pulumi-eks writes it on the group and in the CloudFormation template: tests/fixtures/real/pulumi-eks-nodegroup*).
CLUSTER_TAG = re.compile(r"kubernetes\.io/cluster/([A-Za-z0-9][A-Za-z0-9_.-]*)")


def tagged_clusters(props: Mapping[str, Any]) -> frozenset[str]:
    """The clusters an auto-scaling group's ``kubernetes.io/cluster/<name>`` tags name (tags unknown until apply
    name none: only a dependency places the group then)."""
    names = set()
    try:
        tags = list(elements(get(props, "tags"), "tags"))
    except NotKnown:
        tags = []
    for tag in tags:
        try:
            key = text(get(tag, "key"))
        except NotKnown:
            continue
        match = CLUSTER_TAG.fullmatch(key or "")
        if match:
            names.add(match.group(1))
    return frozenset(names)
