"""Which path each tuning setting takes on each platform: the platform's own mechanism, or the wirespeed agent.

One table, read by `wirespeed plan` (the "Tuning paths" section and the JSON ``tuning_paths``) and
docs/tuning-paths.md (written by ``python -m wirespeed.tuning_paths``, part of ``make regen``, and checked by
tests/repo/test_tuning_paths.py; the README links to it). Pure.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from wirespeed.sizing.aks_sysctls import SOURCE as AKS_SYSCTLS_SOURCE
from wirespeed.userdata import BOOTSTRAP_CONTAINER

Platform = Literal["aks-node-pool", "aks-nap", "eks-al2023", "eks-bottlerocket", "agent-daemonset"]
Setting = Literal["sysctls", "rings", "mtu", "conntrack/outbound"]
AppliedBy = Literal["platform", "agent", "platform + agent"]

PLATFORMS: dict[Platform, str] = {
    "aks-node-pool": "AKS node pool",
    "aks-nap": "AKS node auto-provisioning",
    "eks-al2023": "EKS AL2023",
    "eks-bottlerocket": "EKS Bottlerocket",
    "agent-daemonset": "Any pool: the agent DaemonSet",
}
SETTINGS: tuple[Setting, ...] = ("sysctls", "rings", "mtu", "conntrack/outbound")

# AKS's support policy does not cover node changes made by hand or by a DaemonSet, and AKS has no MTU or ring setting:
# the feature request for one (Azure/AKS#4959, "Increase MTU Size up to 9000 bytes") names the DaemonSet as the
# alternative Microsoft does not support. An SR-IOV VF that host servicing re-adds comes back at driver-default
# rings (MicrosoftDocs/azure-docs#100444): only something running on the node puts them back.
AKS_UNSUPPORTED = "github.com/Azure/AKS/issues/4959"
VF_READD = "MicrosoftDocs/azure-docs#100444"

# Why the agent runs at all, said per cloud: a plan of EKS node groups speaks of ENIs and EKS, never of AKS's
# support policy or Azure's VFs, and an AKS plan the other way round. WHY_AGENT is the whole text (the docs page).
_WHY_AGENT_ANY = (
    "The agent is needed for what happens after boot: someone may change a value by hand, and it puts it back. It "
    "also reports drift and SNAT pressure."
)
_WHY_AGENT_AKS = (
    "On AKS the platform has no setting for NIC rings and MTU, and none for sysctls its custom node configuration "
    f"does not list; an SR-IOV VF re-added by host servicing comes back at driver-default rings ({VF_READD}). "
    f"Changing MTU or rings from a DaemonSet is outside Microsoft's support policy ({AKS_UNSUPPORTED} asks for a "
    "supported setting): wirespeed leaves MTU alone unless the profile opts in, and says so in plan."
)
_WHY_AGENT_EKS = (
    "On EKS the boot script (or Bottlerocket's bootstrap container) tunes the interfaces a node has at boot; "
    "secondary ENIs arrive after kubelet starts, and only something running on the node tunes them."
)
_AKS_PLATFORMS: tuple[Platform, ...] = ("aks-node-pool", "aks-nap")
_EKS_PLATFORMS: tuple[Platform, ...] = ("eks-al2023", "eks-bottlerocket")


def why_agent(platforms: tuple[Platform, ...] | None = None) -> str:
    """Why the agent is needed, in the words of the clouds among ``platforms`` (every cloud when None; a plan with
    only the agent's own row gets both, as it may run on either)."""
    aks = platforms is None or any(p in _AKS_PLATFORMS for p in platforms)
    eks = platforms is None or any(p in _EKS_PLATFORMS for p in platforms)
    if not aks and not eks:
        aks = eks = True
    return " ".join([_WHY_AGENT_ANY, *([_WHY_AGENT_AKS] if aks else []), *([_WHY_AGENT_EKS] if eks else [])])


WHY_AGENT = why_agent()


@dataclass(frozen=True)
class TuningPath:
    """How one setting is applied on one platform, and why that way."""

    platform: Platform
    setting: Setting
    applied_by: AppliedBy
    mechanism: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {
            "platform": self.platform,
            "setting": self.setting,
            "applied_by": self.applied_by,
            "mechanism": self.mechanism,
            "why": self.why,
        }


_AKS_RINGS_WHY = f"AKS has no ring setting; a VF re-added by host servicing is reset ({VF_READD})"
_AKS_MTU_WHY = f"AKS has no MTU setting ({AKS_UNSUPPORTED}); opt-in in the profile"
_AKS_OUTBOUND: tuple[AppliedBy, str, str] = (
    "platform + agent",
    "SNAT ports: load balancer allocatedOutboundPorts or NAT gateway IPs (sized by wirespeed); conntrack table size "
    "and SNAT pressure: the agent",
    "SNAT is a cloud resource; nf_conntrack_max is not among the sysctls wirespeed passes to AKS",
)

PATHS: tuple[TuningPath, ...] = (
    TuningPath(
        "aks-node-pool",
        "sysctls",
        "platform + agent",
        "agentPool linuxOSConfig.sysctls at node creation; other sysctls: the agent",
        f"AKS sets the sysctls it lists, per {AKS_SYSCTLS_SOURCE}; create-only",
    ),
    TuningPath("aks-node-pool", "rings", "agent", "the agent DaemonSet", _AKS_RINGS_WHY),
    TuningPath("aks-node-pool", "mtu", "agent", "the agent DaemonSet", _AKS_MTU_WHY),
    TuningPath("aks-node-pool", "conntrack/outbound", *_AKS_OUTBOUND),
    TuningPath(
        "aks-nap",
        "sysctls",
        "platform + agent",
        "AKSNodeClass spec.linuxOSConfig.sysctls; other sysctls: the agent",
        "karpenter-provider-azure v1.10.0+ passes the AKS-listed sysctls to the nodes it creates",
    ),
    TuningPath("aks-nap", "rings", "agent", "the agent DaemonSet", _AKS_RINGS_WHY),
    TuningPath("aks-nap", "mtu", "agent", "the agent DaemonSet", _AKS_MTU_WHY),
    TuningPath("aks-nap", "conntrack/outbound", *_AKS_OUTBOUND),
    TuningPath(
        "eks-al2023",
        "sysctls",
        "platform",
        "user data: the boot script (text/x-shellscript beside nodeadm's NodeConfig), persisted in /etc/sysctl.d",
        "cloud-init runs it before kubelet starts",
    ),
    TuningPath(
        "eks-al2023",
        "rings",
        "platform + agent",
        "user data: the boot script (ethtool -G, clamped to the device max); then the agent DaemonSet",
        "set before pods land; the agent re-applies to interfaces added later",
    ),
    TuningPath(
        "eks-al2023",
        "mtu",
        "platform + agent",
        "user data: the boot script (ip link set mtu); then the agent DaemonSet",
        "set before kubelet; the agent sets it on interfaces added later (secondary ENIs)",
    ),
    TuningPath(
        "eks-al2023",
        "conntrack/outbound",
        "platform + agent",
        "NAT gateway IPs (sized by wirespeed); nf_conntrack_max in the boot script; SNAT pressure: the agent",
        "SNAT is a cloud resource",
    ),
    TuningPath(
        "eks-bottlerocket",
        "sysctls",
        "platform",
        "Bottlerocket settings.kernel.sysctl",
        "Bottlerocket runs no boot script; its settings carry sysctls",
    ),
    TuningPath(
        "eks-bottlerocket",
        "rings",
        "platform + agent",
        f"settings.bootstrap-containers.{BOOTSTRAP_CONTAINER}: the agent image on every boot, before kubelet; "
        "then the agent DaemonSet",
        "Bottlerocket settings have no ring setting; bootstrap containers are its supported way to run a step "
        "before kubelet",
    ),
    TuningPath(
        "eks-bottlerocket",
        "mtu",
        "platform + agent",
        f"settings.bootstrap-containers.{BOOTSTRAP_CONTAINER}: the agent image on every boot, before kubelet; "
        "then the agent DaemonSet",
        "Bottlerocket settings have no MTU setting; the agent sets it on interfaces added later (secondary ENIs)",
    ),
    TuningPath(
        "eks-bottlerocket",
        "conntrack/outbound",
        "platform + agent",
        "NAT gateway IPs (sized by wirespeed); nf_conntrack_max in settings.kernel.sysctl; SNAT pressure: the agent",
        "SNAT is a cloud resource",
    ),
    TuningPath(
        "agent-daemonset",
        "sysctls",
        "agent",
        "written under the host's /proc/sys/net, re-checked every resync",
        "keeps values others change; sets what the platform cannot",
    ),
    TuningPath(
        "agent-daemonset",
        "rings",
        "agent",
        "ETHTOOL_SRINGPARAM on every selected link, again when a link is added",
        # Said for every cloud: the row appears in AKS and EKS plans alike (the AKS rows cite the VF reset).
        "the only run-time path: a NIC that arrives or is re-added after boot comes up at driver-default rings",
    ),
    TuningPath("agent-daemonset", "mtu", "agent", "netlink, when the profile sets mtu", "opt-in; same as rings"),
    TuningPath(
        "agent-daemonset",
        "conntrack/outbound",
        "agent",
        "nf_conntrack_max as a profile sysctl; the SNATPortPressure condition from conntrack (profile outbound)",
        "watches SNAT use on the node; never changes cloud SNAT",
    ),
)


def paths_for(platforms: tuple[Platform, ...] | None = None) -> list[TuningPath]:
    """The rows for these platforms (all when None), in the table's order."""
    return [p for p in PATHS if platforms is None or p.platform in platforms]


def markdown_table() -> str:
    """The whole table as Markdown, one row per platform and setting, then why the agent is needed."""
    lines = [
        "| platform | setting | applied by | how | why |",
        "|---|---|---|---|---|",
    ]
    for p in PATHS:
        row = [PLATFORMS[p.platform], p.setting, p.applied_by, p.mechanism, p.why]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines) + "\n\n" + WHY_AGENT + "\n"


def plan_lines(platforms: tuple[Platform, ...]) -> list[str]:
    """The plan's text: per platform present, one line per setting (who applies it, how, and why that way)."""
    lines = []
    for platform in PLATFORMS:
        if platform not in platforms:
            continue
        lines.append(f"{PLATFORMS[platform]}:")
        # [applied by] rather than parentheses: mechanisms hold their own (the boot script (ip link set mtu)).
        lines += [f"  {p.setting} [{p.applied_by}]: {p.mechanism}; why: {p.why}" for p in paths_for((platform,))]
    return [*lines, f"Why the agent: {why_agent(platforms)}"]


ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "tuning-paths.md"
INTRO = (
    "Each setting goes through the platform's own mechanism where there is one, and through the agent where there is "
    "none or where only something running on the node can keep it (`wirespeed plan` prints the rows for the "
    "platforms a program uses; `--json` has them as `tuning_paths`). One table, `wirespeed.tuning_paths`."
)


def docs_page() -> str:
    return (
        "# Which path each setting takes\n\n"
        f"{INTRO}\n\n"
        "Generated by `python -m wirespeed.tuning_paths` from `wirespeed.tuning_paths.PATHS` (do not edit); "
        "`wirespeed plan` prints the rows for the platforms a program uses.\n\n" + markdown_table()
    )


def main() -> None:
    DOCS.write_text(docs_page())
    sys.stdout.write(f"wrote {DOCS.relative_to(ROOT)}\n")


if __name__ == "__main__":
    main()
