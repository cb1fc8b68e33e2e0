"""The user data an EKS node boots with: AL2023's MIME multipart, or Bottlerocket's TOML settings.

AL2023 (nodeadm): a ``multipart/mixed`` document with a nodeadm ``NodeConfig`` part (``application/node.eks.aws``)
and the tuning script (``text/x-shellscript``), which cloud-init runs before kubelet starts. EKS managed node
groups and Karpenter merge their own NodeConfig (cluster name, endpoint, CA) into it, so the cluster details are
needed here only for self-managed nodes on a custom AMI.
(docs.aws.amazon.com/eks/latest/userguide/launch-templates.html, "Amazon EKS optimized Amazon Linux 2023 AMIs";
awslabs.github.io/amazon-eks-ami/nodeadm/)

Bottlerocket has no shell at boot: its sysctls go into ``[settings.kernel.sysctl]``, and ring sizes and MTU, which
its settings cannot express, are applied by the wirespeed agent image run as a bootstrap container
(``[settings.bootstrap-containers.wirespeed-tuning]``), which Bottlerocket runs to completion before kubelet starts.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import SMTP

from wirespeed import yaml_text
from wirespeed.manifests import PROFILE_LABEL
from wirespeed.manifests.options import DEFAULT_IMAGE
from wirespeed.profile import Profile, Sysctls
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

# Bottlerocket bootstrap containers (bottlerocket.dev/en/os/1.54.x/api/settings/bootstrap-containers/ and
# .../concepts/bootstrap-containers/): settings.bootstrap-containers.<name>.{source, mode, essential, user-data}.
# systemd runs every bootstrap container to exit before the orchestrator agent (kubelet) starts. host-ctr runs them
# in the host network namespace with CAP_NET_ADMIN added (bottlerocket-os/bottlerocket-core-kit,
# sources/host-ctr/cmd/host-ctr/main.go, withBootstrap), which is what ring and MTU changes need; /proc/sys stays
# read-only there (not a privileged container), so sysctls go through settings.kernel.sysctl instead.
BOOTSTRAP_CONTAINER = "wirespeed-tuning"
# "always": rings and MTU do not survive a reboot, so they are set on every boot ("once" would turn itself "off"
# after the first one).
BOOTSTRAP_MODE = "always"
# Not essential: an essential bootstrap container that exits non-zero halts the boot. The agent's bootstrap mode
# exits 0 whenever its input is valid (a device it cannot tune is reported, not fatal), and the DaemonSet retries.
BOOTSTRAP_ESSENTIAL = False


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
        (yaml_text.dump(node_config(profile, cluster), sort_keys=False), NODECONFIG_CONTENT_TYPE),
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


def bootstrap_profile(profile: Profile) -> Profile:
    """What the bootstrap container applies: the profile without its sysctls (Bottlerocket sets those itself, and
    /proc/sys is read-only in a bootstrap container), the outbound section (the DaemonSet's) and the description:
    EC2 user data holds 16 KB (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html)."""
    return profile.model_copy(update={"sysctls": Sysctls(), "outbound": None, "description": ""})


def bootstrap_user_data(profile: Profile) -> str:
    """The bootstrap container's ``user-data``: base64 of the profile JSON the agent reads from
    /.bottlerocket/bootstrap-containers/current/user-data (``wirespeed-agent bootstrap``)."""
    document = json.dumps(bootstrap_profile(profile).to_json_dict(), separators=(",", ":"), sort_keys=True)
    return base64.b64encode(document.encode()).decode()


def needs_bootstrap_container(profile: Profile) -> bool:
    """Rings or MTU to set: the only settings Bottlerocket's own settings cannot carry."""
    return bool(profile.rings) or profile.mtu is not None


def render_bottlerocket_settings(profile: Profile, agent_image: str = DEFAULT_IMAGE) -> str:
    """Bottlerocket user data (TOML): the profile's label and sysctls, and the agent as a bootstrap container for the
    rings and MTU (none when the profile sets neither). ``agent_image`` is trusted here: the plans check it."""
    bootstrap = needs_bootstrap_container(profile)
    how = (
        f"NIC rings and MTU by the wirespeed agent ({agent_image}) as a bootstrap container before kubelet"
        if bootstrap
        else "no NIC rings or MTU to set"
    )
    lines = [
        f"{BOTTLEROCKET_MARKER} {profile.name}: sysctls through settings.kernel.sysctl; {how}.",
        "[settings.kubernetes.node-labels]",
        f"{json.dumps(PROFILE_LABEL)} = {json.dumps(profile.name)}",
    ]
    sysctls = profile.sysctls.as_dict()
    if sysctls:
        lines += ["", "[settings.kernel.sysctl]"]
        lines += [f"{json.dumps(name)} = {json.dumps(str(value))}" for name, value in sysctls.items()]
    if bootstrap:
        lines += [
            "",
            f"[settings.bootstrap-containers.{BOOTSTRAP_CONTAINER}]",
            f"source = {json.dumps(agent_image)}",
            f"mode = {json.dumps(BOOTSTRAP_MODE)}",
            f"essential = {str(BOOTSTRAP_ESSENTIAL).lower()}",
            f"user-data = {json.dumps(bootstrap_user_data(profile))}",
        ]
    return "\n".join(lines) + "\n"
