"""The user data an EKS node boots with: AL2023's MIME multipart, or Bottlerocket's TOML settings.

AL2023 (nodeadm): a ``multipart/mixed`` document with a nodeadm ``NodeConfig`` part (``application/node.eks.aws``)
and the tuning script (``text/x-shellscript``), which cloud-init runs before kubelet starts. EKS managed node
groups and Karpenter merge their own NodeConfig (cluster name, endpoint, CA) into it, so the cluster details are
needed here only for self-managed nodes on a custom AMI.
(docs.aws.amazon.com/eks/latest/userguide/launch-templates.html, "Amazon EKS optimized Amazon Linux 2023 AMIs";
awslabs.github.io/amazon-eks-ami/nodeadm/)

Bottlerocket has no shell at boot: its sysctls go into ``[settings.kernel.sysctl]``; ring sizes and MTU cannot be
set there and are left to the wirespeed node agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import SMTP

import yaml

from wirespeed.manifests import PROFILE_LABEL
from wirespeed.profile import Profile
from wirespeed.userdata.script import render_script

# nodeadm's NodeConfig and its MIME part type; a text/x-shellscript part runs (cloud-init) before kubelet
# (docs.aws.amazon.com/eks/latest/userguide/launch-templates.html, "Amazon EKS optimized AL2023 AMIs", and
# awslabs.github.io/amazon-eks-ami/nodeadm/).
NODECONFIG_API_VERSION = "node.eks.aws/v1alpha1"
NODECONFIG_CONTENT_TYPE = "application/node.eks.aws"
SCRIPT_CONTENT_TYPE = "text/x-shellscript"
# Fixed so the same profile renders the same bytes: a launch template changes only when the tuning does.
BOUNDARY = "==WIRESPEED-BOUNDARY=="
# The first line of rendered Bottlerocket settings: `wirespeed audit aws` looks for it.
BOTTLEROCKET_MARKER = "# wirespeed profile"


@dataclass(frozen=True)
class ClusterDetails:
    """What nodeadm needs to join a cluster when nothing else supplies it (self-managed nodes, custom AMIs)."""

    name: str
    api_server_endpoint: str
    certificate_authority: str
    cidr: str


def node_config(profile: Profile, cluster: ClusterDetails | None = None) -> dict[str, object]:
    """The nodeadm NodeConfig: the profile label on the node (kubelet merges repeated --node-labels flags,
    so the node group's own labels survive), and the cluster details when given."""
    spec: dict[str, object] = {"kubelet": {"flags": [f"--node-labels={PROFILE_LABEL}={profile.name}"]}}
    if cluster is not None:
        spec["cluster"] = {
            "name": cluster.name,
            "apiServerEndpoint": cluster.api_server_endpoint,
            "certificateAuthority": cluster.certificate_authority,
            "cidr": cluster.cidr,
        }
    return {"apiVersion": NODECONFIG_API_VERSION, "kind": "NodeConfig", "spec": spec}


def render_al2023_user_data(profile: Profile, cluster: ClusterDetails | None = None) -> str:
    """The MIME multipart user data (plain text; EC2 wants it base64-encoded in a launch template)."""
    document = MIMEMultipart("mixed", boundary=BOUNDARY)
    parts = [
        (yaml.safe_dump(node_config(profile, cluster), sort_keys=False), NODECONFIG_CONTENT_TYPE),
        (render_script(profile), SCRIPT_CONTENT_TYPE),
    ]
    for text, content_type in parts:
        subtype = content_type.split("/")[1]
        part = MIMEText(text, subtype, "utf-8")
        # MIMEText sets text/<subtype>; nodeadm's part is application/node.eks.aws.
        part.replace_header("Content-Type", f'{content_type}; charset="utf-8"')
        del part["Content-Transfer-Encoding"]
        part["Content-Transfer-Encoding"] = "7bit"
        part.set_payload(text)
        document.attach(part)
    return document.as_string(policy=SMTP.clone(linesep="\n"))


def render_bottlerocket_settings(profile: Profile) -> str:
    """Bottlerocket user data (TOML): the profile's sysctls and label; rings and MTU are the agent's."""
    lines = [
        f"{BOTTLEROCKET_MARKER} {profile.name}: sysctls only; Bottlerocket cannot run a boot script, so NIC ring",
        "# sizes and MTU are applied by the wirespeed node agent.",
        "[settings.kubernetes.node-labels]",
        f"{json.dumps(PROFILE_LABEL)} = {json.dumps(profile.name)}",
    ]
    sysctls = profile.sysctls.as_dict()
    if sysctls:
        lines += ["", "[settings.kernel.sysctl]"]
        lines += [f"{json.dumps(name)} = {json.dumps(str(value))}" for name, value in sysctls.items()]
    return "\n".join(lines) + "\n"
