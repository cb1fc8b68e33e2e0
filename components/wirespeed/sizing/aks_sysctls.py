"""The sysctls AKS sets at node creation (``linuxOSConfig.sysctls``) and the ranges it accepts: one table.

Source: learn.microsoft.com/azure/aks/custom-node-configuration, "Linux OS custom configuration" (sysctl
table). Only the rows wirespeed has checked are here; any other profile sysctl (``net.core.netdev_budget``...) is
left to the node agent, which applies it at run time.

``linuxOSConfig`` is create-only on an agent pool: changing any of these replaces the pool (new VMs).
Pure: no Pulumi import, and nothing of wirespeed but :mod:`wirespeed.values` (which imports nothing), so the profile
model, the backlog sizing, the AKS components, ``wirespeed plan`` and the policy pack can all read this one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wirespeed.values import whole

SOURCE = "learn.microsoft.com/azure/aks/custom-node-configuration (Linux OS custom configuration, sysctls)"


@dataclass(frozen=True)
class AksSysctl:
    """One ``SysctlConfig`` field: the kernel name, the SDK, engine and AKSNodeClass names, and AKS's accepted range."""

    kernel_name: str
    sdk_field: str
    engine_name: str
    node_class_field: str
    low: int
    high: int
    default: int | str

    def describe_range(self) -> str:
        return f"between {self.low:,} and {self.high:,} (AKS's range for {self.engine_name})"


# (kernel name, pulumi-azure-native SysctlConfigArgs field, engine/API name, AKSNodeClass field, low, high, AKS
# default). The AKSNodeClass spells the net.ipv4 fields with capitals (netIPv4TCP..., karpenter-provider-azure
# pkg/apis/v1beta1/aksnodeclass.go, SysctlConfiguration, since v1.10.0) and gives every row here the same range as
# the AKS API (tests/components/test_azure_nap.py checks both against the CRD in
# tests/fixtures/karpenter-provider-azure).
AKS_SYSCTLS: tuple[AksSysctl, ...] = (
    # 1,000 is also the kernel default (Documentation/admin-guide/sysctl/net.rst).
    AksSysctl("net.core.netdev_max_backlog", "net_core_netdev_max_backlog", "netCoreNetdevMaxBacklog",
              "netCoreNetdevMaxBacklog", 1_000, 3_240_000, 1_000),
    AksSysctl("net.core.somaxconn", "net_core_somaxconn", "netCoreSomaxconn", "netCoreSomaxconn",
              4_096, 3_240_000, 16_384),
    AksSysctl("net.core.rmem_max", "net_core_rmem_max", "netCoreRmemMax", "netCoreRmemMax",
              212_992, 134_217_728, 212_992),
    AksSysctl("net.core.wmem_max", "net_core_wmem_max", "netCoreWmemMax", "netCoreWmemMax",
              212_992, 134_217_728, 212_992),
    AksSysctl("net.core.optmem_max", "net_core_optmem_max", "netCoreOptmemMax", "netCoreOptmemMax",
              20_480, 4_194_304, 20_480),
    AksSysctl("net.ipv4.tcp_max_syn_backlog", "net_ipv4_tcp_max_syn_backlog", "netIpv4TcpMaxSynBacklog",
              "netIPv4TCPMaxSynBacklog", 128, 3_240_000, 16_384),
    AksSysctl("net.ipv4.tcp_fin_timeout", "net_ipv4_tcp_fin_timeout", "netIpv4TcpFinTimeout",
              "netIPv4TCPFinTimeout", 5, 120, 60),
)  # fmt: skip

# net.ipv4.ip_local_port_range is a string "FIRST LAST" with a range per number (same source).
PORT_RANGE_KERNEL_NAME = "net.ipv4.ip_local_port_range"
PORT_RANGE_SDK_FIELD = "net_ipv4_ip_local_port_range"
PORT_RANGE_ENGINE_NAME = "netIpv4IpLocalPortRange"
PORT_RANGE_NODE_CLASS_FIELD = "netIPv4IPLocalPortRange"
PORT_RANGE_FIRST = (1_024, 60_999)
PORT_RANGE_LAST = (32_768, 65_535)
PORT_RANGE_DEFAULT = "32768 60999"

BY_KERNEL_NAME: Mapping[str, AksSysctl] = {s.kernel_name: s for s in AKS_SYSCTLS}


def supported_kernel_names() -> tuple[str, ...]:
    """Every sysctl AKS can set at node creation, by kernel name."""
    return (*(s.kernel_name for s in AKS_SYSCTLS), PORT_RANGE_KERNEL_NAME)


def check_value(kernel_name: str, value: object) -> str | None:
    """Why AKS would refuse ``value`` for ``kernel_name`` (None when it accepts it)."""
    if kernel_name == PORT_RANGE_KERNEL_NAME:
        return _check_port_range(value)
    row = BY_KERNEL_NAME.get(kernel_name)
    if row is None:
        return f"{kernel_name!r} is not a sysctl AKS sets at node creation; supported: " + ", ".join(
            supported_kernel_names()
        )
    number = whole(value)
    if number is None or not row.low <= number <= row.high:
        return f"{value!r} is not allowed: must be a whole number {row.describe_range()}"
    return None


def _check_port_range(value: object) -> str | None:
    allowed = (
        f'"FIRST LAST" with FIRST {PORT_RANGE_FIRST[0]:,}..{PORT_RANGE_FIRST[1]:,}, LAST '
        f"{PORT_RANGE_LAST[0]:,}..{PORT_RANGE_LAST[1]:,} and FIRST < LAST (AKS's range for {PORT_RANGE_ENGINE_NAME})"
    )
    parts = value.split() if isinstance(value, str) else []
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return f"{value!r} is not allowed: {allowed}"
    first, last = int(parts[0]), int(parts[1])
    ok = PORT_RANGE_FIRST[0] <= first <= PORT_RANGE_FIRST[1] and PORT_RANGE_LAST[0] <= last <= PORT_RANGE_LAST[1]
    if not ok or first >= last:
        return f"{value!r} is not allowed: {allowed}"
    return None


def sdk_field(kernel_name: str) -> str:
    """The ``SysctlConfigArgs`` keyword for a supported kernel name."""
    if kernel_name == PORT_RANGE_KERNEL_NAME:
        return PORT_RANGE_SDK_FIELD
    return BY_KERNEL_NAME[kernel_name].sdk_field


def engine_name(kernel_name: str) -> str:
    """The camelCase name the engine and the AKS API use (``netCoreNetdevMaxBacklog``)."""
    if kernel_name == PORT_RANGE_KERNEL_NAME:
        return PORT_RANGE_ENGINE_NAME
    return BY_KERNEL_NAME[kernel_name].engine_name


def node_class_field(kernel_name: str) -> str:
    """The AKSNodeClass ``spec.linuxOSConfig.sysctls`` field for a supported kernel name (``netIPv4TCPFinTimeout``)."""
    if kernel_name == PORT_RANGE_KERNEL_NAME:
        return PORT_RANGE_NODE_CLASS_FIELD
    return BY_KERNEL_NAME[kernel_name].node_class_field
